"""How a call reaches an agent: one transport per binding (JSON-RPC, HTTP+JSON, gRPC, 0.3)."""

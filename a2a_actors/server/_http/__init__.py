"""The HTTP bindings: the ASGI core, JSON-RPC, HTTP+JSON, the 0.3 aliases, SSE."""

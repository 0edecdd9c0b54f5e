"""What a server is configured with: ``ServerConfig`` and the option values it holds (gRPC,
metrics, the inspector, trust), importing nothing of what they configure."""

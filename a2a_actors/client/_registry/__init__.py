"""Finding agents by name: a file, the well-known card, a NATS bucket."""

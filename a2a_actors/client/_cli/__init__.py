"""The client commands of ``a2a-actors``: card, send, get, list, cancel, subscribe, agents."""

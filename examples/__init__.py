"""Runnable example agents; serve any of them with ``a2a-actors serve examples.<name>:agent``."""

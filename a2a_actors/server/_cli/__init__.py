"""The ``serve`` command: its flags, and the options they build."""

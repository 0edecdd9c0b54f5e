"""The inspector: a live page of this server's tasks at ``/inspect`` (``serve --inspect``).

See docs/observability.md, "Inspector". ``create_app`` installs it
(:func:`a2a_actors.server._observability.inspector.app.install_inspector`) when
``ServerConfig.inspect`` holds :class:`InspectorOptions`. This package's root imports only the
options and the feed, so that the configuration can name them without importing the server.
"""

from __future__ import annotations

from a2a_actors.server._config.inspector import InspectorOptions
from a2a_actors.server._observability.inspector.feed import FeedStatistics, InspectorFeed

__all__ = ("FeedStatistics", "InspectorFeed", "InspectorOptions")

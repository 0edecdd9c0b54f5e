"""What every registry hands out: its entries, their changes, and the error for a name no
agent is registered under."""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable

from a2a_actors.client._errors import AgentCardError
from a2a_actors.protocol._card import AgentCard

__all__ = ("RegistryChange", "RegistryEntry", "UnknownAgentError", "unknown_agent")


@dataclasses.dataclass(frozen=True, slots=True)
class RegistryEntry:
    """A registered agent.

    Attributes:
        name: The name it is registered under (its card's name, unless a static registry
            says otherwise).
        url: Its base URL, as clients reach it.
        card: Its AgentCard.
    """

    name: str
    url: str
    card: AgentCard


@dataclasses.dataclass(frozen=True, slots=True)
class RegistryChange:
    """One change seen by :meth:`Registry.watch`.

    Attributes:
        name: The name that changed.
        entry: Its new entry; ``None`` when it was withdrawn (or expired).
    """

    name: str
    entry: RegistryEntry | None


class UnknownAgentError(AgentCardError):
    """No agent is registered under a name.

    Attributes:
        name: The name looked up.
        close_matches: Registered names close to it, best first.
    """

    def __init__(self, name: str, close_matches: Iterable[str] = ()) -> None:
        self.name = name
        self.close_matches = tuple(close_matches)
        hint = (
            f"; did you mean {', '.join(repr(m) for m in self.close_matches)}?"
            if self.close_matches
            else ""
        )
        super().__init__(f"no agent named {name!r} is registered{hint}")


def unknown_agent(name: str, known: Iterable[str]) -> UnknownAgentError:
    """The error for ``name``, with up to three close matches among ``known``."""
    return UnknownAgentError(name, difflib.get_close_matches(name, list(known), n=3, cutoff=0.5))

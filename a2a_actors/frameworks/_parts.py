"""A2A parts as framework input: the shared rules every bridge applies.

* text parts are text;
* data parts are their JSON, as text (no framework takes structured input as such);
* file parts (``raw`` bytes or a ``url``) go to the framework's multimodal input, by media
  type (the part's ``mediaType``, else guessed from its ``filename`` or URL); a kind the
  framework cannot take is refused with :class:`UnsupportedContent`, which the bridge turns
  into a REJECTED task naming the part and what the agent takes.
"""

from __future__ import annotations

import json
import mimetypes

from a2a_actors.protocol._errors import ContentTypeNotSupportedError
from a2a_actors.protocol._models import Part

__all__ = ("UnsupportedContent", "data_text", "media_type", "part_name")


class UnsupportedContent(ContentTypeNotSupportedError):
    """A part of the message is of a kind the framework agent cannot take."""


def media_type(part: Part) -> str:
    """The part's media type: declared, else guessed from its file name or URL ("" when
    neither tells)."""
    if part.media_type:
        return part.media_type.split(";", 1)[0].strip().lower()
    for name in (part.filename, part.url or ""):
        guessed = mimetypes.guess_type(name)[0] if name else None
        if guessed:
            return guessed
    return ""


def data_text(part: Part) -> str:
    """A data part's value as JSON text."""
    return json.dumps(part.data, ensure_ascii=False, separators=(",", ":"))


def part_name(part: Part) -> str:
    """How a refusal names ``part``: its kind, media type and file name."""
    kind = "a file" if part.raw is not None else "a URL" if part.url is not None else "a part"
    details = ", ".join(x for x in (media_type(part) or "unknown media type", part.filename) if x)
    return f"{kind} ({details})"

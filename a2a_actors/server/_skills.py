"""Publishing ``SKILL.md`` folders as AgentCard skills.

A skill folder holds a ``SKILL.md`` whose YAML front matter names the skill::

    ---
    name: Weather forecast
    description: Forecasts for any city
    tags: [weather, forecast]
    examples:
      - Rain in Paris tomorrow?
    ---
    (free text, ignored here)

The skill's ``id`` is the folder name; ``name`` defaults to it; ``description`` is required;
``tags`` default to :data:`DEFAULT_TAGS`. Only the simple front-matter subset used by skill
files is parsed (``key: value`` scalars, optionally quoted; ``[a, b]`` flow lists; ``- item``
block lists; ``|`` / ``>`` block scalars), so no YAML dependency is needed.
"""

from __future__ import annotations

from pathlib import Path

from a2a_actors.protocol._card import AgentSkill

__all__ = ("DEFAULT_TAGS", "SkillFileError", "load_skills", "parse_front_matter", "skill_from_file")

#: Tags of a skill whose front matter has none (the card requires a non-empty list).
DEFAULT_TAGS: tuple[str, ...] = ("skill",)
SKILL_FILE = "SKILL.md"

FrontMatter = dict[str, str | list[str]]


class SkillFileError(ValueError):
    """A ``SKILL.md`` file is missing its front matter or a required key."""


def _scalar(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


def _flow_list(text: str) -> list[str]:
    inner = text.strip()[1:-1]
    return [item for part in inner.split(",") if (item := _scalar(part))]


def parse_front_matter(text: str) -> FrontMatter:
    """The front-matter keys of a Markdown document (empty when it has none).

    Raises:
        SkillFileError: The front matter is opened with ``---`` but never closed.
    """
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() in ("---", "..."))
    except StopIteration:
        raise SkillFileError("front matter is not closed with '---'") from None
    result: FrontMatter = {}
    key: str | None = None
    block: list[str] | None = None  # lines of a |/> block scalar
    folded = False
    for line in lines[1:end]:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            if block is not None:
                block.append("")
            continue
        indented = line[:1] in (" ", "\t")
        if indented and key is not None:
            if block is not None:
                block.append(stripped)
                result[key] = (" " if folded else "\n").join(block).strip()
            elif stripped.startswith("- "):
                current = result.get(key)
                items = current if isinstance(current, list) else []
                items.append(_scalar(stripped[2:]))
                result[key] = items
            continue
        name, colon, value = line.partition(":")
        if not colon:
            continue
        key, block = name.strip(), None
        value = value.strip()
        if value in ("|", ">", "|-", ">-"):
            block, folded = [], value.startswith(">")
            result[key] = ""
        elif value.startswith("[") and value.endswith("]"):
            result[key] = _flow_list(value)
        elif value:
            result[key] = _scalar(value)
        else:
            result[key] = []
    return result


def _as_list(value: str | list[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(t for part in value.split(",") if (t := part.strip()))
    return tuple(value)


def skill_from_file(path: Path) -> AgentSkill:
    """The skill described by one ``SKILL.md`` (its ``id`` is the parent folder's name).

    Raises:
        SkillFileError: No front matter, or no ``description``.
        OSError: The file cannot be read.
    """
    meta = parse_front_matter(path.read_text(encoding="utf-8"))
    if not meta:
        raise SkillFileError(f"{path}: no front matter")
    description = meta.get("description")
    if not isinstance(description, str) or not description:
        raise SkillFileError(f"{path}: front matter has no 'description'")
    skill_id = path.parent.name
    name = meta.get("name")
    return AgentSkill(
        id=skill_id,
        name=name if isinstance(name, str) and name else skill_id,
        description=description,
        tags=_as_list(meta.get("tags")) or DEFAULT_TAGS,
        examples=_as_list(meta.get("examples")),
    )


def load_skills(folder: Path) -> tuple[AgentSkill, ...]:
    """Skills of ``folder``: itself when it holds a ``SKILL.md``, else each subfolder that does.

    Subfolders are taken in name order.

    Raises:
        SkillFileError: A ``SKILL.md`` is malformed.
        FileNotFoundError: ``folder`` does not exist.
    """
    if not folder.is_dir():
        raise FileNotFoundError(f"skill folder not found: {folder}")
    own = folder / SKILL_FILE
    if own.is_file():
        return (skill_from_file(own),)
    return tuple(
        skill_from_file(sub / SKILL_FILE)
        for sub in sorted(folder.iterdir())
        if sub.is_dir() and (sub / SKILL_FILE).is_file()
    )

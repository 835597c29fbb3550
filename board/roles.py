"""Roles and rosters: who sits on the board and where each one's soul file lives.

A role is a lowercase slug. ``general`` is the chair and the default route; it sits
in every roster and uses ``SOUL.md`` at the workspace root. Specialists of the
``board`` roster use ``board/<role>.soul.md``; specialists of any other roster use
``rosters/<roster>/<role>.soul.md``. A soul file added to a roster's folder while
Sabha runs adds that role; config can override name, emoji, model and soul file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a type only: the model layer's dataclasses are not imported by `sabha --help`
    from board.llm.base import Thinking

__all__ = [
    "DEFAULT_ROSTERS",
    "GENERAL",
    "SOUL_SUFFIX",
    "RoleOverride",
    "RosterSpec",
    "default_soul_path",
    "is_role_slug",
    "roster_folder",
    "soul_candidates",
]

GENERAL = "general"

DEFAULT_ROSTERS: dict[str, tuple[str, ...]] = {
    "board": ("research", "content", "finance", "strategy", "critic"),
    "sabha": ("investor", "cto", "analyst"),
    "roundtable": ("artist", "business", "tech", "summarizer"),
}

ROLE_SLUG = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")

SOUL_SUFFIX = ".soul.md"


def is_role_slug(text: str) -> bool:
    """True when ``text`` is a valid role slug (lowercase, starts with a letter, <= 32)."""
    return bool(ROLE_SLUG.match(text))


def roster_folder(roster: str) -> PurePosixPath:
    """Workspace-relative folder holding a roster's specialist soul files."""
    return PurePosixPath("board") if roster == "board" else PurePosixPath("rosters") / roster


def default_soul_path(roster: str, role: str) -> PurePosixPath:
    """Workspace-relative soul file of ``role`` in ``roster``."""
    if role == GENERAL:
        return PurePosixPath("SOUL.md")
    return roster_folder(roster) / f"{role}{SOUL_SUFFIX}"


def soul_candidates(roster: str, role: str) -> tuple[PurePosixPath, ...]:
    """Where a role's soul may live, first match wins: the roster's folder, then the
    ``board`` folder (so a custom roster can reuse the board's finance or critic)."""
    first = default_soul_path(roster, role)
    fallback = default_soul_path("board", role)
    return (first,) if fallback == first else (first, fallback)


@dataclass(frozen=True)
class RoleOverride:
    """Per-role settings from config (``board.agents.<role>``); None means not set."""

    name: str | None = None
    emoji: str | None = None
    model: str | None = None
    soul_file: str | None = None
    tools: tuple[str, ...] | None = None
    temperature: float | None = None
    thinking: Thinking | None = None


@dataclass(frozen=True)
class RosterSpec:
    """The roster in use: its name, its configured specialists and per-role overrides."""

    name: str = "board"
    specialists: tuple[str, ...] = DEFAULT_ROSTERS["board"]
    overrides: tuple[tuple[str, RoleOverride], ...] = ()
    #: the seed's single-agent setup (config ``board.enabled: false``): the chair alone, no role addressing
    single: bool = False

    @classmethod
    def build(
        cls,
        name: str,
        *,
        custom: dict[str, list[str]] | None = None,
        overrides: dict[str, RoleOverride] | None = None,
        single: bool = False,
    ) -> RosterSpec:
        """A roster by name: a custom one from config, else a built-in one; with ``single``, the chair
        alone (the specialists are left out, whatever the roster names)."""
        custom = custom or {}
        if name in custom:
            members = tuple(r for r in custom[name] if r != GENERAL)
        elif name in DEFAULT_ROSTERS:
            members = DEFAULT_ROSTERS[name]
        else:
            known = sorted(set(DEFAULT_ROSTERS) | set(custom))
            raise ValueError(f"unknown roster {name!r}; known rosters: {', '.join(known)}")
        return cls(name=name, specialists=() if single else members,
                   overrides=tuple(sorted((overrides or {}).items())), single=single)

    def override(self, role: str) -> RoleOverride:
        """Config overrides for ``role`` (empty when none)."""
        for slug, value in self.overrides:
            if slug == role:
                return value
        return RoleOverride()

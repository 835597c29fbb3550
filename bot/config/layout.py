"""A board's layout read without validating the whole config: for ``sabha souls``.

``sabha souls`` needs the workspace, the data dir (where last good souls are kept), the
roster with its ``board.agents`` overrides and the default model; nothing else. Validating
the whole file with pydantic costs more than the rest of the command (importing pydantic
alone is about 0.1 s), so :func:`read_layout` reads the file as :mod:`bot.config.load` does
(same file, same YAML, same ``${VAR}`` references) and checks what souls depends on:

* every top-level key, and every key of ``llm``, ``board`` and ``board.agents.<role>``, is
  one the config knows (so a typo such as ``llm.modle`` is never taken for "not set");
* ``workspace`` and ``data_dir`` are text, ``llm.model`` names a known provider, the roster
  exists, ``board.rosters`` and ``board.agents`` hold role slugs and values of the right
  type and range, exactly as the pydantic models require.

Anything it cannot vouch for (an unset variable, a value of another type, a key it does
not know) makes it return None: the caller then validates the whole config, which accepts
it or says what is wrong in the usual words. The values of the other sections (prices,
channels, the server ...) are not looked at: ``sabha config check``, ``ask``, ``chat`` and
``run`` validate them. ``tests/test_board_layout.py`` keeps the key lists equal to the
models' fields and checks that both readings agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from board.llm.base import Thinking
from board.roles import DEFAULT_ROSTERS, RoleOverride, RosterSpec, is_role_slug
from bot.config.file import (
    DEFAULT_DATA_DIR,
    DEFAULT_MODEL,
    DEFAULT_ROSTER,
    DEFAULT_WORKSPACE,
    FoundBy,
    check_model,
    read_data,
)

if TYPE_CHECKING:
    from bot.config.loaded import LoadedConfig

__all__ = ["AGENT_KEYS", "BOARD_KEYS", "CONFIG_KEYS", "LLM_KEYS", "BoardLayout", "layout_in", "layout_of",
           "read_layout", "role_override"]

#: The keys of :class:`bot.config.sections.Config`, ``LLMSection``, ``BoardSection`` and ``AgentOverrideConfig``.
CONFIG_KEYS = frozenset({"workspace", "data_dir", "llm", "board", "tools", "logging", "server", "inbox", "budget",
                         "telegram", "whatsapp", "slack", "discord", "knowledge", "web_search", "memory", "guardrails",
                         "media", "people", "web", "state", "schedule", "replicas", "mcp", "telemetry"})
LLM_KEYS = frozenset({"model", "max_tokens", "fallbacks", "cheap_model", "thinking", "keep_thinking",
                      "max_tool_iterations", "timeout_s", "turn_timeout_s", "retry", "prices", "text_tool_protocol",
                      "providers", "context"})
BOARD_KEYS = frozenset({"enabled", "roster", "rosters", "agents", "history_messages", "max_message_chars", "meetings",
                        "slow_notice_s", "timezone",
                        "consultation"})
AGENT_KEYS = frozenset({"name", "emoji", "model", "soul_file", "tools", "temperature", "thinking", "telegram_token"})


@dataclass(frozen=True)
class BoardLayout:
    """Where a board's souls and data are, its roster and its default model."""

    source: Path | None
    base_dir: Path
    found_by: FoundBy
    workspace: Path
    data_dir: Path
    roster: RosterSpec
    model: str
    data: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)  # the file, for its secrets


class _Unsure(Exception):
    """The light reading cannot vouch for this config: validate it whole."""


def layout_of(loaded: LoadedConfig) -> BoardLayout:
    """The layout of a fully validated config."""
    return BoardLayout(source=loaded.source, base_dir=loaded.base_dir, found_by=loaded.found_by,
                       workspace=loaded.workspace, data_dir=loaded.data_dir, roster=loaded.roster(),
                       model=loaded.config.llm.model)


def read_layout(explicit: str | Path | None = None, env: Mapping[str, str] | None = None,
                cwd: Path | None = None) -> BoardLayout | None:
    """The layout of the board's config file, or None when it must be validated whole (see the
    module docstring; no file found is None too). Raises :class:`bot.config.file.ConfigError`
    as :func:`bot.config.load.load_config` would for a missing file or one that is not YAML."""
    found = read_data(explicit, env, cwd)
    return None if found is None else layout_in(found.data, found.path, found.found_by)


def layout_in(data: dict[str, Any], path: Path, found_by: FoundBy) -> BoardLayout | None:
    """The layout of ``data``, the interpolated file at ``path``, or None when it must be validated whole."""
    try:
        return _layout(data, path, found_by)
    except _Unsure:
        return None


def role_override(value: object) -> RoleOverride | None:
    """``board.agents.<role>`` as the board reads it, or None when it must be validated whole."""
    try:
        return _override(value)
    except _Unsure:
        return None


def _layout(data: dict[str, Any], path: Path, found_by: FoundBy) -> BoardLayout:
    _known(data, CONFIG_KEYS)
    llm, board = _section(data, "llm", LLM_KEYS), _section(data, "board", BOARD_KEYS)
    model = _text(llm, "model", DEFAULT_MODEL)
    try:
        model = check_model(model)
    except ValueError:
        raise _Unsure from None
    rosters = board.get("rosters", {})
    if not isinstance(rosters, dict) or not all(
            _slug(name) and isinstance(members, list) and all(_slug(m) for m in members)
            for name, members in rosters.items()):
        raise _Unsure
    roster = _text(board, "roster", DEFAULT_ROSTER, min_length=0)
    if roster not in DEFAULT_ROSTERS and roster not in rosters:
        raise _Unsure
    agents = board.get("agents", {})
    if not isinstance(agents, dict) or not all(_slug(role) for role in agents):
        raise _Unsure
    overrides = {role: _override(value) for role, value in agents.items()}
    enabled = board.get("enabled", True)
    if not isinstance(enabled, bool):
        raise _Unsure
    base_dir = path.resolve().parent
    return BoardLayout(
        source=path.resolve(), base_dir=base_dir, found_by=found_by,
        workspace=(base_dir / _text(data, "workspace", DEFAULT_WORKSPACE, min_length=0)).resolve(),
        data_dir=(base_dir / _text(data, "data_dir", DEFAULT_DATA_DIR, min_length=0)).resolve(),
        roster=RosterSpec.build(roster, custom=rosters, overrides=overrides, single=not enabled), model=model,
        data=data)


def _known(mapping: dict[Any, Any], keys: frozenset[str]) -> None:
    if not all(isinstance(key, str) and key in keys for key in mapping):
        raise _Unsure


def _section(data: dict[str, Any], name: str, keys: frozenset[str]) -> dict[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, dict):
        raise _Unsure
    _known(value, keys)
    return value


def _slug(value: object) -> bool:
    return isinstance(value, str) and is_role_slug(value)


def _text(mapping: dict[str, Any], key: str, default: str, *, min_length: int = 1,
          max_length: int | None = None) -> str:
    value = mapping.get(key, default)
    if not isinstance(value, str) or len(value) < min_length or (max_length is not None and len(value) > max_length):
        raise _Unsure
    return value


def _optional_text(mapping: dict[str, Any], key: str, max_length: int | None = None) -> str | None:
    return None if mapping.get(key) is None else _text(mapping, key, "", max_length=max_length)


def _override(value: object) -> RoleOverride:
    """``board.agents.<role>`` as ``AgentOverrideConfig`` checks it."""
    if not isinstance(value, dict):
        raise _Unsure
    _known(value, AGENT_KEYS)
    tools = value.get("tools")
    if tools is not None and not (isinstance(tools, list) and all(isinstance(t, str) for t in tools)):
        raise _Unsure
    temperature = value.get("temperature")
    if temperature is not None and (isinstance(temperature, bool) or not isinstance(temperature, (int, float))
                                    or not 0 <= temperature <= 2):
        raise _Unsure
    thinking = value.get("thinking")
    try:
        level = Thinking.of(thinking) if thinking is not None else None
    except ValueError:
        raise _Unsure from None
    return RoleOverride(name=_optional_text(value, "name", 64), emoji=_optional_text(value, "emoji", 16),
                        model=_optional_text(value, "model"), soul_file=_optional_text(value, "soul_file"),
                        tools=tuple(tools) if tools is not None else None,
                        temperature=float(temperature) if temperature is not None else None,
                        thinking=level)

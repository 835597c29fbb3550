"""SIGHUP: re-read the config file and apply what can change while Sabha runs.

:func:`reload_config` reads the file the daemon was started with. A file that does not
load (bad YAML, a failed validation, a missing variable) changes nothing: the reason is
logged and the running config stays. So does one that would break the running daemon: a
model it would switch to whose provider has no API key in the daemon's environment (keys
are read at start; the turns would answer degraded). A refusal is whole: no key of the
file is applied, not even the ones that would have been fine. Otherwise every changed key is logged, old -> new
(secrets masked), and split in two:

* applied now (:data:`LIVE`): who may talk (``telegram.allowed_user_ids`` /
  ``allowed_chat_ids``, ``whatsapp.access`` / ``allowed_numbers`` / public limits), which
  models answer (``llm.model`` / ``fallbacks`` / ``cheap_model``), ``inbox.max_concurrent_turns``
  and the budgets; the MCP servers and their limits (``mcp``: servers added, removed and changed are started,
  stopped and restarted);
* everything else is logged as "needs a restart" and not applied.

A reload takes what it replaces: the runner's settings (the models), the budget's, and the board's
settings as configured now (:class:`Configured`: the board), never the whole board.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from board.agent.runner import AgentRunner
from board.app import BoardSettings
from board.spending.budget import Budget
from board.tools.mcp import McpServers
from bot.app import missing_keys
from bot.channels.base import Channel, ChannelCapabilities
from bot.config import ConfigError, LoadedConfig
from bot.config.load import load_config, masked_dump
from bot.intake.intake import IntakeHub

__all__ = ["LIVE", "Configured", "ReloadResult", "ReloadSignal", "changed_keys", "reload_config"]

log = logging.getLogger("sabha.reload")

#: Keys (or key prefixes) a reload applies while running.
LIVE: tuple[str, ...] = (
    "telegram.allowed_user_ids", "telegram.allowed_chat_ids",
    "whatsapp.access", "whatsapp.allowed_numbers", "whatsapp.public_rate_per_minute", "whatsapp.public_daily_usd",
    "whatsapp.public_meetings", "whatsapp.allowed_groups",
    "llm.model", "llm.fallbacks", "llm.cheap_model",
    "inbox.max_concurrent_turns",
    "budget.daily_usd", "budget.per_sender_daily_usd",
    "mcp",
)


class Configured(Protocol):
    """What holds the board's settings as configured now (the board): a reload replaces the models and budgets."""

    settings: BoardSettings


@dataclass
class ReloadResult:
    """What a reload did: the new config (None when refused), the changes applied and the ones
    that wait for a restart (``key: old -> new``), or why the file was refused."""

    loaded: LoadedConfig | None = None
    applied: list[str] = field(default_factory=list)
    needs_restart: list[str] = field(default_factory=list)
    error: str | None = None


def _flatten(node: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(node, Mapping):
        out: dict[str, Any] = {}
        for key, value in node.items():
            out.update(_flatten(value, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: node}


def changed_keys(old: LoadedConfig, new: LoadedConfig) -> list[str]:
    """Dotted keys whose effective value differs (secrets compared by value)."""
    before = _flatten(old.config.model_dump(mode="python"))
    after = _flatten(new.config.model_dump(mode="python"))
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def _shown(value: Any) -> str:
    return json.dumps(value, default=str, ensure_ascii=False)


def _is_live(key: str) -> bool:
    return any(key == live or key.startswith(live + ".") for live in LIVE)


def reload_config(source: Path | None, current: LoadedConfig, *, board: Configured, runner: AgentRunner,
                  budget: Budget, hub: IntakeHub, channels: Iterable[Channel],
                  mcp: McpServers | None = None) -> ReloadResult:
    """Re-read ``source`` and apply its live changes to the running parts (``board``'s settings, the ``runner``'s
    models, the ``budget``, the ``hub``'s turn cap, the ``channels``, the ``mcp`` servers); see the module
    docstring."""
    if source is None:
        why = "Sabha runs on the built-in defaults (no config file), so there is nothing to re-read"
        log.warning("reload: %s; start it with --config PATH to use reloads", why)
        return ReloadResult(error=why)
    try:
        new = load_config(source)
    except ConfigError as exc:
        log.error("reload: the new config was refused, the running one stays:\n%s", exc)
        return ReloadResult(error=str(exc))
    breaks = _would_break(current, new)
    if breaks:
        why = "; ".join(breaks)
        log.error("reload: the new config was refused, the running one stays (nothing of it applied): %s", why)
        return ReloadResult(error=why)
    result = ReloadResult(loaded=new)
    keys = changed_keys(current, new)
    if not keys:
        log.info("reload: %s re-read; nothing changed", source)
        return result
    old_shown, new_shown = _flatten(masked_dump(current.config)), _flatten(masked_dump(new.config))
    for key in keys:
        line = f"{key}: {_shown(old_shown.get(key))} -> {_shown(new_shown.get(key))}"
        (result.applied if _is_live(key) else result.needs_restart).append(line)
    _apply(new, keys, _LiveParts(board=board, runner=runner, budget=budget, hub=hub, channels=tuple(channels),
                                 mcp=mcp))
    for line in result.applied:
        log.info("reload: applied %s", line)
    for line in result.needs_restart:
        log.warning("reload: %s changed but takes effect only after a restart (systemctl restart sabha)", line)
    return result


def _live_models(loaded: LoadedConfig) -> list[str]:
    llm = loaded.config.llm
    return [llm.model, *llm.fallbacks, *([llm.cheap_model] if llm.cheap_model else [])]


def _would_break(current: LoadedConfig, new: LoadedConfig) -> list[str]:
    """Why applying ``new`` would break the running daemon (empty: it would not).

    A model a reload switches to must be usable by the providers the daemon started with
    (their keys and base URLs are not reloaded), so it is checked against ``current``'s.
    A model the running config already uses is not a new break.
    """
    running = set(_live_models(current))
    added = [m for m in _live_models(new) if m not in running]
    return [f"it names a model this daemon cannot use: {problem}; put the key in the daemon's environment "
            "(under systemd: /etc/sabha/sabha.env) and restart, or name a model that has its key"
            for problem in missing_keys(current, models=added)]


@dataclass(frozen=True, kw_only=True)
class _LiveParts:
    """What a reload changes while Sabha runs."""

    board: Configured
    runner: AgentRunner
    budget: Budget
    hub: IntakeHub
    channels: tuple[Channel, ...]
    mcp: McpServers | None = None


def _apply(new: LoadedConfig, keys: list[str], live_parts: _LiveParts) -> None:
    config = new.config
    board, hub = live_parts.board, live_parts.hub
    changed = {k for k in keys if _is_live(k)}  # every live key is a leaf (a list counts as one)
    if changed & {"llm.model", "llm.fallbacks", "llm.cheap_model"}:
        agent = replace(live_parts.runner.settings, default_model=config.llm.model,
                        fallbacks=tuple(config.llm.fallbacks),
                        cheap_model=config.llm.cheap_model)
        live_parts.runner.settings = agent
        board.settings = replace(board.settings, agent=agent)
    if "inbox.max_concurrent_turns" in changed:
        cap = config.inbox.max_concurrent_turns
        hub.settings = hub.settings.model_copy(update={"max_concurrent_turns": cap})
        hub.scheduler.cap = cap  # a lower cap lets running turns finish; a higher one fills as turns end
    if changed & {"budget.daily_usd", "budget.per_sender_daily_usd"}:
        live_parts.budget.settings = new.budget_settings()
        board.settings = replace(board.settings, budget=live_parts.budget.settings)
    if live_parts.mcp is not None and any(k == "mcp" or k.startswith("mcp.") for k in changed):
        settings = config.mcp.settings()
        for line in live_parts.mcp.reconfigure(settings):
            log.info("reload: %s", line)
        board.settings = replace(board.settings, mcp=settings)
    for channel in live_parts.channels:
        prefix = f"{channel.name}."
        live = ChannelCapabilities.of(channel).reconfigure
        if live is not None and any(k.startswith(prefix) for k in changed):
            live.reconfigure(getattr(config, channel.name))


class ReloadSignal:
    """SIGHUP on the running loop calls ``on_reload`` (where the platform has SIGHUP)."""

    def __init__(self, on_reload: Callable[[], None]) -> None:
        self.on_reload = on_reload
        self._loop: asyncio.AbstractEventLoop | None = None

    def install(self, loop: asyncio.AbstractEventLoop) -> None:
        """Handle SIGHUP on ``loop``."""
        sighup = getattr(signal, "SIGHUP", None)
        if sighup is None:
            return
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sighup, self._handle)
            self._loop = loop

    def _handle(self) -> None:
        log.info("SIGHUP received: re-reading the config")
        try:
            self.on_reload()
        except Exception:  # a reload must never take the daemon down
            log.exception("reload failed; the running config stays")

    def uninstall(self) -> None:
        """Give SIGHUP back to its default."""
        if self._loop is not None:
            with contextlib.suppress(Exception):
                self._loop.remove_signal_handler(signal.SIGHUP)
            self._loop = None

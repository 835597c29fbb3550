"""What ``GET /readyz`` checks: can this daemon do its job right now?

Ready means: start-up finished and no shutdown begun, every enabled channel is connected
(its ``describe()`` says ``state: running`` with no ``problem``), the state db can be
written (:class:`bot.intake.storage.StorageHealth`), the state store answers a ping now
(:func:`ping_store`: PostgreSQL may be down while nothing was written yet) and the workspace is loaded (the
folder exists and the chair, ``general``, has a usable soul). Each failed check adds
one reason a person can act on. An MCP server that is not connected does not make the daemon unready: the
board answers without its tools, so ``/readyz`` says ``degraded`` (HTTP 200) and names it under ``checks.mcp``.
``/healthz`` is different: it only says the process lives.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from board.roles import GENERAL

if TYPE_CHECKING:
    from board.storage import Database
    from board.tools.mcp import ServerStatus
    from board.workspace.souls import SoulStore
    from bot.channels.base import Channel
    from bot.intake.storage import StorageHealth

__all__ = ["PING_TIMEOUT_S", "Readiness", "check_readiness", "ping_store"]

#: How long ``/readyz`` waits for the state store to answer (a load balancer's probe is short).
PING_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class Readiness:
    """The verdict: ``ready`` and, when not, the ``reasons``; ``checks`` has each part's state."""

    ready: bool
    reasons: tuple[str, ...] = ()
    checks: dict[str, Any] = field(default_factory=dict)
    degraded: tuple[str, ...] = ()  # what works less well without stopping the daemon (an MCP server down)

    @property
    def status(self) -> str:
        """``ready``, ``degraded`` (ready, but part of it is down) or ``not ready``."""
        if not self.ready:
            return "not ready"
        return "degraded" if self.degraded else "ready"

    def as_json(self) -> dict[str, Any]:
        """The body of ``/readyz``."""
        return {"status": self.status, "ready": self.ready, "reasons": list(self.reasons),
                "degraded": list(self.degraded), "checks": self.checks}


def _channel_reason(name: str, state: dict[str, Any]) -> str | None:
    status = state.get("state")
    problem = state.get("problem")
    if status == "running" and not problem:
        return None
    if status == "running":
        return f"channel {name}: not connected: {problem}"
    return f"channel {name}: {status}" + (f": {problem}" if problem else "")


async def ping_store(db: Database | None, timeout: float = PING_TIMEOUT_S) -> str | None:
    """None when the board's state store ``db`` answers within ``timeout`` (or the board is not open yet: None);
    else what is wrong, in one line."""
    if db is None:
        return None
    try:
        async with asyncio.timeout(timeout):
            await db.ping()
    except TimeoutError:
        return f"no answer in {timeout:g} s"
    except Exception as exc:  # noqa: BLE001 - any failure is the reason
        return " ".join(str(exc).split()) or type(exc).__name__
    return None


def _mcp_checks(servers: Sequence[ServerStatus]) -> tuple[dict[str, Any], list[str]]:
    checks: dict[str, Any] = {}
    degraded: list[str] = []
    for server in servers:
        checks[server.name] = {"ok": server.state.usable, **server.as_json()}
        if not server.state.usable and server.state.value != "stopped":
            degraded.append(f"mcp server {server.name}: {server.state.value}"
                            + (f": {server.last_error}" if server.last_error else ""))
    return checks, degraded


def check_readiness(*, phase: str, channels: Sequence[Channel], storage: StorageHealth, souls: SoulStore | None,
                    workspace: Path, store_unreachable: str | None = None,
                    mcp: Sequence[ServerStatus] = ()) -> Readiness:
    """Check every part; ``phase`` is the daemon's (``starting``, ``running``, ``stopping``); ``souls`` the
    board's (None: the board is not open yet); ``store_unreachable`` is :func:`ping_store`'s verdict; ``mcp``
    the MCP servers' states (one not connected: degraded, not unready)."""
    reasons: list[str] = []
    checks: dict[str, Any] = {"phase": phase}
    if phase != "running":
        reasons.append(f"daemon is {phase}")
    channel_checks: dict[str, Any] = {}
    for channel in channels:
        try:
            state = channel.describe()
        except Exception as exc:  # noqa: BLE001 - a broken describe() is itself a reason
            state = {"state": "unknown", "problem": f"describe() failed: {exc}"}
        reason = _channel_reason(channel.name, state)
        channel_checks[channel.name] = {"ok": reason is None, "state": state.get("state"),
                                        "problem": state.get("problem")}
        if reason:
            reasons.append(reason)
    checks["channels"] = channel_checks
    checks["storage"] = {"ok": storage.ok and store_unreachable is None,
                         "problem": storage.problem if store_unreachable is None else store_unreachable}
    if store_unreachable is not None:
        reasons.append(f"state store unreachable: {store_unreachable}")
    elif not storage.ok:
        reasons.append(f"state db not writable ({storage.problem}); free disk space or fix the data dir's permissions")
    loaded = souls is not None and workspace.is_dir()
    problem = None
    if souls is None:
        problem = "the board is not open yet"
    elif not workspace.is_dir():
        problem = f"workspace {workspace} does not exist; run `sabha init` or fix `workspace:` in the config"
    elif not souls.has(GENERAL):
        loaded, problem = False, f"the chair ({GENERAL}) has no usable soul file; see `sabha souls`"
    checks["workspace"] = {"ok": loaded, "problem": problem}
    if problem:
        reasons.append(f"workspace not loaded: {problem}")
    checks["mcp"], degraded = _mcp_checks(mcp)
    return Readiness(not reasons, tuple(reasons), checks, tuple(degraded))

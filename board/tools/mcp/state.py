"""A server's state as ``/readyz``, ``sabha doctor`` and ``sabha tools list`` show it."""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["ServerState", "ServerStatus"]


class ServerState(enum.Enum):
    """Where a server is in its life."""

    STARTING = "starting"  # connecting (spawning the command, or reaching the URL) and listing its tools
    READY = "ready"  # connected: its tools are offered
    RESTARTING = "restarting"  # it died or could not be reached: tried again after a backoff (1 s doubling to 60 s)
    FAILED = "failed"  # not connected and not being tried now (its last error says why)
    STOPPED = "stopped"  # not started (yet), or stopped with Sabha or removed by a reload

    @property
    def usable(self) -> bool:
        """Whether its tools are offered now."""
        return self is ServerState.READY


@dataclass(frozen=True)
class ServerStatus:
    """One server now: state, what it is, its tools offered (name, read-only), the last error, how often it
    restarted, and the tools it lists that are not offered (a name or schema that cannot be shown safely)."""

    name: str
    state: ServerState
    transport: str
    where: str
    tools: tuple[tuple[str, bool], ...] = ()
    last_error: str | None = None
    restarts: int = 0
    refused: tuple[tuple[str, str], ...] = ()  # (the tool's name, quoted; why it is not offered)

    def as_json(self) -> dict[str, object]:
        """The JSON form (``/readyz``)."""
        return {"state": self.state.value, "transport": self.transport, "tools": len(self.tools),
                "last_error": self.last_error, "restarts": self.restarts}

"""Channels: adapters between a messaging service and the channel-agnostic board.

A channel turns native updates into :class:`board.envelope.Envelope` objects, calls
``board.handle`` and delivers the :class:`board.envelope.Reply` back to the same place.
The daemon (:mod:`bot.daemon`) drives every channel through :class:`Channel`.
"""

from __future__ import annotations

from typing import Any, Protocol

from aiohttp import web


class Channel(Protocol):
    """What the daemon needs from a channel."""

    name: str

    def routes(self) -> list[web.RouteDef]:
        """aiohttp routes the channel serves (webhooks); added before the server starts."""
        ...

    async def start(self) -> None:
        """Connect and start receiving; raise with a clear message when it cannot."""
        ...

    async def stop_intake(self) -> None:
        """Stop receiving new messages (work already received still finishes)."""
        ...

    async def stop(self) -> None:
        """Finish received work (bounded), then disconnect."""
        ...

    def status_lines(self) -> list[str]:
        """Human-readable state for ``/status``."""
        ...

    def describe(self) -> dict[str, Any]:
        """Machine-readable state for the health endpoint."""
        ...

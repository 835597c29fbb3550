"""Socket Mode: Slack's events, button presses and slash commands over a WebSocket Sabha opens.

:class:`SocketLink` runs the official async client (``slack_sdk.socket_mode.aiohttp.SocketModeClient``):
``apps.connections.open`` with the app-level token gives the ``wss://`` URL, Slack sends envelopes
(``events_api``, ``interactive``, ``slash_commands``) and each one is acknowledged (its
``envelope_id`` sent back) ONLY after ``receive`` said it is stored: the durable claim comes first,
as the Events API's 200 does. An envelope ``receive`` could not store is not acknowledged, so Slack
sends it again (``retry_attempt`` counts up) and the intake's dedupe answers it once.

Slack drops sockets now and then: a ``disconnect`` envelope (``refresh_requested``, ``warning``,
``too_many_websockets``) or a plain close. The client opens a new URL and reconnects; this module logs
both and keeps :attr:`SocketLink.problem` (the channel's readiness) set while the socket has been down
for longer than :data:`DOWN_GRACE_S`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from bot.channels.receipt import ReceivedVia, received

if TYPE_CHECKING:
    from aiohttp import WSMessage
    from slack_sdk.socket_mode.aiohttp import SocketModeClient
    from slack_sdk.socket_mode.async_client import AsyncBaseSocketModeClient
    from slack_sdk.socket_mode.request import SocketModeRequest

__all__ = ["DOWN_GRACE_S", "SocketAck", "SocketDelivery", "SocketKind", "SocketLink", "SocketReceive"]

log = logging.getLogger("sabha.slack.socket")

#: How long the socket may be down (reconnecting) before readiness says so.
DOWN_GRACE_S = 15.0
#: How often the link looks at the connection (readiness, the "reconnected" line).
WATCH_EVERY_S = 1.0
#: The client's WebSocket ping interval (Slack's own client default is 5 s).
PING_INTERVAL_S = 5.0


class SocketKind(StrEnum):
    """The envelope types that carry work (Slack's ``type`` of a Socket Mode envelope)."""

    EVENTS_API = "events_api"  # the payload is an Events API body (event_callback)
    INTERACTIVE = "interactive"  # block_actions and the like (what the interactivity URL would get)
    SLASH_COMMANDS = "slash_commands"  # a slash command's fields (what its request URL would get, as JSON)


@dataclass(frozen=True)
class SocketDelivery:
    """One envelope as Slack sent it."""

    kind: SocketKind
    envelope_id: str
    payload: Mapping[str, Any]
    retry_attempt: int = 0
    retry_reason: str = ""

    @property
    def is_retry(self) -> bool:
        """Slack sent it before and saw no acknowledgement."""
        return self.retry_attempt > 0


@dataclass(frozen=True)
class SocketAck:
    """The acknowledgement of a stored envelope; ``payload``: what it carries back (a slash command's answer)."""

    payload: Mapping[str, Any] | None = None


#: Stores one delivery (the durable claim); its acknowledgement when stored or nothing to store, None when it
#: could not be stored (left unacknowledged: Slack sends it again). It must not raise for bad input.
SocketReceive = Callable[[SocketDelivery], Awaitable[SocketAck | None]]


class SocketLink:
    """The Socket Mode connection of one app (see the module docstring)."""

    def __init__(self, *, app_token: str, api_base_url: str, receive: SocketReceive,
                 ping_interval: float = PING_INTERVAL_S, down_grace_s: float = DOWN_GRACE_S,
                 channel_name: str = "slack") -> None:
        self.channel_name = channel_name  # the channel its envelopes' receipt spans name
        self._app_token = app_token
        self._api_base_url = api_base_url
        self._receive = receive
        self._ping_interval = ping_interval
        self._down_grace_s = down_grace_s
        self._client: SocketModeClient | None = None
        self._watch: asyncio.Task[None] | None = None
        self._connecting: asyncio.Task[None] | None = None
        self._down_since: float | None = time.monotonic()
        self.connects = 0
        self.acked = 0
        self.unacked = 0

    async def start(self) -> None:
        """Check the app-level token (a refusal is a :class:`ChannelError` saying what to do), then connect in the
        background: an unreachable Slack is retried by the client while readiness says so."""
        from slack_sdk.errors import SlackApiError
        from slack_sdk.socket_mode.aiohttp import SocketModeClient
        from slack_sdk.web.async_client import AsyncWebClient

        from bot.channels.base import ChannelError

        web = AsyncWebClient(base_url=self._api_base_url.rstrip("/") + "/", retry_handlers=[])
        client = SocketModeClient(app_token=self._app_token, web_client=web, ping_interval=self._ping_interval,
                                  logger=logging.getLogger("sabha.slack.socket.client"))
        client.socket_mode_request_listeners.append(self._on_request)
        client.on_message_listeners.append(self._on_frame)
        self._client = client
        try:
            client.wss_uri = await client.issue_new_wss_url()
        except SlackApiError as exc:
            await self.stop()
            error = exc.response.get("error") if exc.response is not None else None
            raise ChannelError(f"Slack refused slack.app_token for Socket Mode ({error}): make an App-Level Token "
                               "with connections:write (Basic Information > App-Level Tokens), put it in "
                               "SLACK_APP_TOKEN and turn on Socket Mode in the app's settings") from exc
        except Exception as exc:  # noqa: BLE001 - unreachable now: the client keeps trying, readiness says so
            log.warning("Slack Socket Mode: apps.connections.open failed (%s: %s); retrying in the background",
                        type(exc).__name__, exc)
        self._connecting = asyncio.create_task(client.connect(), name="slack-socket-connect")  # type: ignore[no-untyped-call]
        self._watch = asyncio.create_task(self._watch_loop(), name="slack-socket-watch")

    async def stop(self) -> None:
        """Close the connection (no envelope is acknowledged after this: Slack sends the rest again)."""
        for task in (self._connecting,):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self._connecting = None
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
            self._watch = None
        client, self._client = self._client, None
        if client is not None:
            client.socket_mode_request_listeners.clear()
            await client.close()  # type: ignore[no-untyped-call]
            with contextlib.suppress(Exception):
                await client.aiohttp_client_session.close()

    @property
    def problem(self) -> str | None:
        """Why the channel is not ready: the socket has been down longer than the grace period."""
        if self._client is None:
            return "Socket Mode is not connected"
        if self._down_since is None:
            return None
        down = time.monotonic() - self._down_since
        if down < self._down_grace_s:
            return None
        return f"Socket Mode disconnected for {down:.0f}s; reconnecting (check the network and SLACK_APP_TOKEN)"

    @property
    def connected(self) -> bool:
        """True while the socket is up (as last seen)."""
        return self._client is not None and self._down_since is None

    async def _watch_loop(self) -> None:
        session: str | None = None
        while self._client is not None:
            up = await self._client.is_connected()
            if up:
                now = await self._client.session_id()
                if now != session:
                    self.connects += 1
                    if session is None:
                        log.info("Slack Socket Mode connected")
                    else:
                        log.info("Slack Socket Mode reconnected (a new session)")
                    session = now
                self._down_since = None
            elif self._down_since is None:
                self._down_since = time.monotonic()
                log.warning("Slack Socket Mode connection lost; reconnecting")
            await asyncio.sleep(WATCH_EVERY_S)

    async def _on_frame(self, frame: WSMessage) -> None:
        """Log what Slack says about the connection itself (the client reconnects on its own)."""
        data = frame.data
        if not isinstance(data, str) or '"disconnect"' not in data:
            return
        with contextlib.suppress(ValueError):
            message = json.loads(data)
            if isinstance(message, dict) and message.get("type") == "disconnect":
                log.info("Slack asked Sabha to reconnect (%s); opening a new Socket Mode connection",
                         message.get("reason") or "no reason given")

    async def _on_request(self, client: AsyncBaseSocketModeClient, request: SocketModeRequest) -> None:
        try:
            kind = SocketKind(request.type)
        except ValueError:
            log.info("Slack Socket Mode: %s envelope ignored (acknowledged)", request.type)
            await _ack(client, request.envelope_id, None)
            return
        delivery = SocketDelivery(kind, request.envelope_id, request.payload, request.retry_attempt or 0,
                                  request.retry_reason or "")
        try:
            with received(self.channel_name, ReceivedVia.SOCKET):
                ack = await self._receive(delivery)
        except Exception:  # a bug while storing: unacknowledged, Slack sends it again
            log.exception("Slack envelope %s (%s) could not be stored; left unacknowledged", delivery.envelope_id,
                          kind.value)
            ack = None
        if ack is None:
            self.unacked += 1
            return
        await _ack(client, request.envelope_id, ack.payload)
        self.acked += 1


async def _ack(client: AsyncBaseSocketModeClient, envelope_id: str, payload: Mapping[str, Any] | None) -> None:
    from slack_sdk.socket_mode.response import SocketModeResponse

    await client.send_socket_mode_response(SocketModeResponse(envelope_id=envelope_id,
                                                              payload=dict(payload) if payload else None))

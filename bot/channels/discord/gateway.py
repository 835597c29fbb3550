"""discord.py inside Sabha's event loop: the client (:class:`BoardClient`), where it connects, and the gateway's
events handed to the channel as plain values (:class:`GatewayHooks`, :func:`incoming_of`).

The client asks for the intents the board needs: ``guilds`` (channels and threads), ``guild_messages`` and
``dm_messages`` (messages) and ``message_content`` (their text: a privileged intent, switched on in the Developer
Portal > Bot; without it Discord closes the gateway with 4014 and the log says where to switch it on). It caches
no messages and asks for no members.

Where it connects: REST at ``discord.api_base_url`` (discord.py builds every URL from ``discord.http.Route.BASE``;
:func:`point_at` sets it), the gateway at the address ``GET /gateway/bot`` gives (discord.py 2.7 would otherwise
use its built-in ``wss://gateway.discord.gg``; :func:`point_at_gateway` sets the class's default, which a
``RESUME`` then replaces with the ``resume_gateway_url`` of ``READY``, as Discord asks). Both are process-wide in
discord.py: one Discord bot per Sabha process.

:meth:`BoardClient.run_gateway` is the connection: ``connect(reconnect=True)``, so discord.py resumes a dropped
session (``RESUME`` with the last sequence; the gateway replays what was missed) and identifies anew when Discord
invalidates it; what it cannot survive (a refused token 4004, a missing intent 4014) ends it with the fix logged.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import discord
import yarl
from discord.gateway import DiscordWebSocket

from board.media.attachment import Attachment
from bot.channels.discord.departure import leaving_trace
from bot.channels.discord.inbound import Incoming

__all__ = ["BoardClient", "GatewayHooks", "incoming_of", "intents", "point_at", "point_at_gateway"]

log = logging.getLogger("sabha.discord")

#: Pauses between connection attempts after discord.py's own loop gave up (the last one repeats).
RETRY_S = (1.0, 2.0, 5.0, 10.0, 30.0)
#: Close codes after which connecting again cannot help (a refused token, a bad intent, sharding).
FATAL_CLOSE_CODES = frozenset({4004, 4010, 4011, 4012, 4013, 4014})


def intents() -> discord.Intents:
    """The gateway intents the board needs (see the module docstring)."""
    wanted = discord.Intents.none()
    wanted.guilds = True
    wanted.guild_messages = True
    wanted.dm_messages = True
    wanted.message_content = True
    return wanted


def point_at(api_base_url: str) -> None:
    """discord.py's REST requests go to ``api_base_url`` (``https://discord.com/api/v10`` or a local server)."""
    discord.http.Route.BASE = api_base_url.rstrip("/")


def point_at_gateway(url: str) -> None:
    """discord.py's first connection goes to ``url`` (what ``GET /gateway/bot`` answered)."""
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(url)


def incoming_of(message: discord.Message, attachments: tuple[Attachment, ...] = ()) -> Incoming:
    """The plain facts of ``message`` (see :class:`bot.channels.discord.inbound.Incoming`), with ``attachments``:
    its files as the channel's attachment reader gave them."""
    channel = message.channel
    guild = message.guild.id if message.guild is not None else None
    if guild is None and isinstance(channel, discord.PartialMessageable):  # a server not in discord.py's cache
        guild = channel.guild_id
    parent = channel.parent_id if isinstance(channel, discord.Thread) else None
    author = message.author
    return Incoming(message_id=str(message.id), channel_id=str(channel.id), author_id=str(author.id),
                    author_name=author.display_name, content=message.content,
                    guild_id=str(guild) if guild is not None else None,
                    parent_id=str(parent) if parent is not None else None,
                    from_bot=author.bot or message.webhook_id is not None, system=message.is_system(),
                    attachments=attachments)


@dataclass(frozen=True)
class GatewayHooks:
    """What the channel hears from the gateway."""

    message: Callable[[discord.Message], None]  # a MESSAGE_CREATE (queued: the order of arrival is kept)
    ready: Callable[[], Awaitable[None]]  # a new session (READY): read what was missed meanwhile
    resumed: Callable[[], None]  # the session resumed (RESUMED): the gateway replays what was missed
    disconnected: Callable[[], None]
    #: an INTERACTION_CREATE (a button, a slash command): bot.channels.discord's components handle it
    interaction: Callable[[discord.Interaction], Awaitable[None]] | None = None


class BoardClient(discord.Client):
    """discord.py's client for the board (see the module docstring)."""

    def __init__(self, hooks: GatewayHooks) -> None:
        discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False  # the board has no voice: no warning
        super().__init__(intents=intents(), max_messages=None, chunk_guilds_at_startup=False,
                         member_cache_flags=discord.MemberCacheFlags.none(), http_trace=leaving_trace())
        self.hooks = hooks

    async def on_message(self, message: discord.Message) -> None:
        self.hooks.message(message)

    async def on_ready(self) -> None:
        log.info("discord: connected to the gateway as %s (%s)", self.user, self.user.id if self.user else "?")
        await self.hooks.ready()

    async def on_resumed(self) -> None:
        log.info("discord: gateway session resumed (what was missed is replayed)")
        self.hooks.resumed()

    async def on_disconnect(self) -> None:
        self.hooks.disconnected()

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        if self.hooks.interaction is not None:
            await self.hooks.interaction(interaction)

    async def on_error(self, event_method: str, /, *args: object, **kwargs: object) -> None:
        log.exception("discord: handling %s failed", event_method)

    async def run_gateway(self) -> None:
        """The gateway connection until :meth:`close` (see the module docstring); never raises. discord.py's
        loop gives up on some failures of a first connection (no session to resume yet): tried again here, after
        1, 2, 5, 10, then every 30 s."""
        failures = 0
        while not self.is_closed():
            try:
                await self.connect(reconnect=True)
                return
            except discord.PrivilegedIntentsRequired:
                log.error("discord: the gateway refused the message content intent (4014): switch on 'Message "
                          "Content Intent' in the Developer Portal > your application > Bot > Privileged Gateway "
                          "Intents, then restart Sabha")
                return
            except discord.ConnectionClosed as exc:
                if exc.code in FATAL_CLOSE_CODES:
                    log.error("discord: the gateway closed the connection for good (code %s%s); restart Sabha once "
                              "it is fixed", exc.code, ": the token was refused, reset it in the Developer Portal > "
                              "Bot" if exc.code == 4004 else "")
                    return
                log.warning("discord: the gateway closed the connection (code %s); connecting again", exc.code)
            except Exception as exc:  # noqa: BLE001 - whatever ended discord.py's loop, the board reconnects
                log.warning("discord: the gateway connection failed (%s: %s); connecting again",
                            type(exc).__name__, exc)
            self.hooks.disconnected()
            await asyncio.sleep(RETRY_S[min(failures, len(RETRY_S) - 1)])
            failures += 1

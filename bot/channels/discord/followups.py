"""The answer to a Discord interaction: its token kept (:class:`InteractionTokens`) and the reply sent as the
interaction's follow-up (:class:`Followups`).

An interaction (a button pressed, a slash command) is answered twice: at once, within Discord's 3 seconds, with a
deferred response (:mod:`.interactions`: after the board stored it), and later with the outcome, the command's
reply, sent through the interaction's webhook (``POST /webhooks/{application}/{token}``: a message in the
channel or thread where it was used, shown as the answer to that use). The token is what that needs; it works for
15 minutes after the interaction (Discord's rule), so it is kept in the state db with the interaction
(``discord_interactions``, migration 1175) and a reply finished after a restart still goes as the follow-up.

:meth:`Followups.deliver` sends a reply whose ``reply_to`` names an interaction (:func:`.interactions.interaction_of`)
when its token is known, was acknowledged and is younger than :data:`TOKEN_LIFE_S` (a margin below Discord's 15
minutes), and says False otherwise: the channel then posts the reply as an ordinary message in the same place
(a token expired during an outage must not lose the answer). The follow-up goes with no mentions allowed and with
the reply's buttons (:mod:`.components`); a long reply is split at Discord's 2000 characters. Its requests report
to the delivery's :class:`bot.intake.delivery.SendProgress` like every other send: "sending" as the first leaves,
a 4xx refusal posted nothing, a 5xx or a lost connection after it left may have.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import aiohttp
import discord

from board.envelope import Button, Reply
from board.storage import Database
from bot.channels.discord.components import button_view
from bot.intake.delivery import DeliveryOutcome, SendFailed, SendProgress

__all__ = ["MAX_CHARS", "TOKEN_LIFE_S", "Followups", "InteractionTokens", "StoredToken", "split_reply"]

log = logging.getLogger("sabha.discord")

#: How long after an interaction its follow-up is tried (Discord's tokens live 15 minutes).
TOKEN_LIFE_S = 14 * 60.0
#: Discord's limit for one message's content.
MAX_CHARS = 2000


@dataclass(frozen=True)
class StoredToken:
    """One row of ``discord_interactions``."""

    interaction_id: str
    token: str
    application_id: str
    kind: str
    created_at: float
    acknowledged: bool


async def _post(webhook: discord.Webhook, text: str, view: discord.ui.View | None) -> None:
    if view is None:
        await webhook.send(text, allowed_mentions=discord.AllowedMentions.none(), wait=True)
    else:
        await webhook.send(text, allowed_mentions=discord.AllowedMentions.none(), wait=True, view=view)


class _Gone(Exception):
    """Discord does not know the interaction's token (any more)."""


class InteractionTokens:
    """The ``discord_interactions`` table."""

    def __init__(self, db: Database, clock: Callable[[], float] = time.time) -> None:
        self.db = db
        self.clock = clock

    async def keep(self, interaction_id: str, token: str, application_id: str, kind: str) -> None:
        """The interaction arrived (kept once: a replayed one keeps its first row)."""
        await self.db.execute(
            "INSERT INTO discord_interactions(interaction_id, token, application_id, kind, created_at) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (interaction_id) DO NOTHING",
            (interaction_id, token, application_id, kind, self.clock()))

    async def acknowledged(self, interaction_id: str) -> None:
        """Discord took the interaction's first response."""
        await self.db.execute("UPDATE discord_interactions SET acknowledged = 1 WHERE interaction_id = ?",
                              (interaction_id,))

    async def get(self, interaction_id: str) -> StoredToken | None:
        """The row of ``interaction_id``, if kept."""
        row = await self.db.fetchone("SELECT interaction_id, token, application_id, kind, created_at, acknowledged "
                                     "FROM discord_interactions WHERE interaction_id = ?", (interaction_id,))
        if row is None:
            return None
        return StoredToken(row["interaction_id"], row["token"], row["application_id"], row["kind"],
                           float(row["created_at"]), bool(row["acknowledged"]))

    async def forget_before(self, seconds_ago: float = 24 * 3600.0) -> None:
        """Drop the rows older than ``seconds_ago`` (their tokens are long dead)."""
        await self.db.execute("DELETE FROM discord_interactions WHERE created_at < ?", (self.clock() - seconds_ago,))


def split_reply(text: str, limit: int = MAX_CHARS) -> list[str]:
    """``text`` in pieces of at most ``limit`` characters, cut at a paragraph, a line or a space when one is near."""
    pieces: list[str] = []
    rest = text.strip() or "\u2026"
    while len(rest) > limit:
        window = rest[:limit]
        at = max(window.rfind("\n\n"), window.rfind("\n"), window.rfind(" "))
        at = at if at > limit // 4 else limit
        pieces.append(rest[:at].rstrip())
        rest = rest[at:].lstrip()
    pieces.append(rest)
    return pieces


class Followups:
    """Sends replies to interactions as their follow-ups (see the module docstring)."""

    def __init__(self, client: discord.Client, tokens: InteractionTokens, *,
                 render: Callable[[Reply], str] = lambda reply: reply.text,
                 sending: Callable[[SendProgress | None], contextlib.AbstractContextManager[object]] | None = None,
                 responded: Callable[[str], Awaitable[None]] | None = None) -> None:
        self.client = client
        self.responded = responded  # until Discord was answered for an interaction (its first response made)
        self.tokens = tokens
        self.render = render  # the reply's text as the channel writes it (headed by who answers)
        self.sending = sending  # the channel's departure mark around a request (None: marked before it)
        self.sent = 0
        self.expired = 0

    async def usable(self, interaction_id: str) -> StoredToken | None:
        """The token of ``interaction_id`` when a follow-up can still use it."""
        if self.responded is not None:
            await self.responded(interaction_id)
        stored = await self.tokens.get(interaction_id)
        if stored is None or not stored.acknowledged:
            return None
        if self.tokens.clock() - stored.created_at > TOKEN_LIFE_S:
            self.expired += 1
            log.info("discord: interaction %s is older than %.0f minutes; its answer goes as a message instead",
                     interaction_id, TOKEN_LIFE_S / 60)
            return None
        return stored

    async def deliver(self, interaction_id: str, reply: Reply, progress: SendProgress) -> bool:
        """Send ``reply`` as the follow-up of ``interaction_id``; False when its token cannot be used (nothing
        sent: the channel posts it as a message). Raises :class:`SendFailed` when Discord refused or the
        connection broke."""
        stored = await self.usable(interaction_id)
        if stored is None:
            return False
        webhook = discord.Webhook.partial(int(stored.application_id), stored.token, client=self.client)
        pieces = split_reply(self.render(reply))
        if progress.heading:
            pieces[0] = f"{progress.heading}\n\n{pieces[0]}"
        for i, piece in enumerate(pieces[progress.skip:], start=progress.skip):
            last = i == len(pieces) - 1
            try:
                await self._send(webhook, piece, reply.buttons if last else (), progress)
            except _Gone:
                if progress.posted:
                    raise SendFailed("the interaction's token stopped working mid-reply") from None
                log.info("discord: the token of interaction %s was refused; its answer goes as a message instead",
                         interaction_id)
                return False
            await progress.part_done(i + 1, len(pieces))
        self.sent += 1
        return True

    async def _send(self, webhook: discord.Webhook, text: str, buttons: Sequence[Button],
                    progress: SendProgress) -> None:
        view = button_view(buttons)
        try:
            if self.sending is not None:
                with self.sending(progress):
                    await _post(webhook, text, view)
            else:
                await progress.leaving()
                await _post(webhook, text, view)
        except discord.HTTPException as exc:
            if exc.status in (401, 404):  # an unknown or expired token (10015, 50027): nothing posted
                await progress.nothing_posted()
                raise _Gone from exc
            if exc.status < 500:
                await progress.nothing_posted()
                raise SendFailed(f"Discord refused the interaction's follow-up: {exc.status} {exc.text}") from exc
            raise SendFailed(f"the interaction's follow-up failed ({exc.status})",
                             DeliveryOutcome.MAY_HAVE_ARRIVED if progress.in_flight
                             else DeliveryOutcome.NOT_SENT) from exc
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise SendFailed(f"the interaction's follow-up failed ({type(exc).__name__}: {exc})",
                             DeliveryOutcome.MAY_HAVE_ARRIVED if progress.in_flight
                             else DeliveryOutcome.NOT_SENT) from exc
        progress.posted += 1
        progress.in_flight = False

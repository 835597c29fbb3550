"""What the web pages work with: :class:`WebContext` (one per daemon) and its typed lookup.

The context holds the board's parts the pages use (the meetings, the decisions, the souls, the ledger,
the clock...), taken once from the board's :class:`~board.app.Parts` by :meth:`WebContext.of`; the
pages never see the whole board. Kept apart from :mod:`bot.web.app` (which builds the sub-application
from the pages) so the pages and the stream can look the context up without importing the app that
imports them.
"""

from __future__ import annotations

import asyncio
import secrets
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, timedelta
from typing import TYPE_CHECKING

from aiohttp import web

from board.roles import DEFAULT_ROSTERS
from bot.web.auth import WebAuth
from bot.web.meeting_feed import MeetingFeed
from bot.web.settings import WebSettings

if TYPE_CHECKING:
    from board.agent.runner import AgentRunner
    from board.app import Parts
    from board.app.rosters import Rosters
    from board.clock import Clock
    from board.commands.registry import CommandRegistry
    from board.conversation.sessions import Sessions
    from board.conversation.transcripts import TranscriptStore
    from board.decisions.ratify import DecisionBook
    from board.decisions.reminders import Reminders
    from board.room.convene import BoardRoom
    from board.room.store import MeetingStore
    from board.schedule import Schedule
    from board.schedule.standing import StandingWork
    from board.spending.ledger import Ledger
    from board.storage import Database
    from board.workspace.souls import SoulStore
    from bot.intake.lanes import LaneLoad

__all__ = ["MAX_NONCES", "PREFIX", "WEB", "WebContext", "context_of"]

PREFIX = "/ui"
MAX_NONCES = 1000
NONCE_DAYS = 30  # how long a New meeting form's nonce is kept in web_form_nonces


@dataclass(eq=False, kw_only=True)
class WebContext:
    """What the pages work with (one per daemon): the board's parts they use, the web's own pieces, and
    what the forms remember. Not frozen: the daemon sets :attr:`server_url` once its port is known."""

    # the board's parts (WebContext.of)
    clock: Clock
    db: Database  # the web's own tables (form nonces), the ledger's last activity, the verdicts
    souls: SoulStore
    rosters: Rosters
    runner: AgentRunner  # the model each advisor answers with (as reloaded)
    sessions: Sessions
    transcripts: TranscriptStore
    room: BoardRoom  # running meetings, starting one, the meeting settings
    meetings: MeetingStore
    decisions: DecisionBook
    reminders: Reminders
    schedule: Schedule  # a prediction resolved on a page cancels its resolution request
    standing: StandingWork  # standing work (/ui/schedule): listed, paused, resumed, removed
    commands: CommandRegistry
    ledger: Ledger
    roster: str  # the board's own roster
    roster_names: tuple[str, ...]  # the rosters a meeting may be held with, the board's own first
    min_resolved_predictions: int  # an advisor's track record is scored from this many resolved predictions
    # the web's own
    settings: WebSettings
    auth: WebAuth
    feed: MeetingFeed
    server_url: str
    lease_s: float = 15.0  # replicas.lease_s: a replica seen within it is alive (the operations page)
    #: this process's turns now (the intake's lanes; set by the daemon once its intake exists; the operations page)
    intake_load: Callable[[], LaneLoad] | None = None
    nonces: OrderedDict[str, str] = field(default_factory=OrderedDict)  # New meeting form nonce -> meeting id
    topics: OrderedDict[str, str] = field(default_factory=OrderedDict)  # meeting id -> topic, of those started here
    #: what a form's POST said, shown once by the page it redirects to (token -> (kind, text); bot.web.decisions)
    notes: OrderedDict[str, tuple[str, str]] = field(default_factory=OrderedDict)
    #: one ruling from the pages at a time, so a double submit is told which press changed the verdict
    rulings: asyncio.Lock = field(default_factory=asyncio.Lock)

    @classmethod
    def of(cls, parts: Parts, *, settings: WebSettings, auth: WebAuth, feed: MeetingFeed,
           server_url: str) -> WebContext:
        """The context of the board whose parts are ``parts`` (the one place the pages' parts are taken)."""
        configured = parts.settings  # roster, custom rosters and meetings: a reload leaves them as built
        names = (configured.roster.name, *DEFAULT_ROSTERS, *(name for name, _ in configured.custom_rosters))
        return cls(clock=parts.clock, db=parts.db, souls=parts.souls, rosters=parts.rosters, runner=parts.runner,
                   sessions=parts.sessions, transcripts=parts.transcripts, room=parts.room,
                   meetings=parts.room.store, decisions=parts.decisions, reminders=parts.reminders,
                   schedule=parts.schedule, standing=parts.standing, commands=parts.commands, ledger=parts.ledger,
                   roster=configured.roster.name,
                   roster_names=tuple(dict.fromkeys(names)),
                   min_resolved_predictions=configured.meetings.min_resolved_predictions,
                   settings=settings, auth=auth, feed=feed, server_url=server_url)

    def new_nonce(self) -> str:
        """A fresh form nonce (a double submit of one form starts one meeting)."""
        return secrets.token_urlsafe(12)

    def labels(self, roster: str | None) -> dict[str, str]:
        """``role -> "🦉 Critic"`` for the roles of ``roster`` (the board's own when None or unknown)."""
        try:
            souls = self.rosters.souls_for(roster) if roster else self.souls
            return {p.role: p.label for p in souls.profiles()}
        except (ValueError, KeyError):
            return {p.role: p.label for p in self.souls.profiles()}

    async def started_by(self, nonce: str) -> str | None:
        """The meeting a form with ``nonce`` started (this run, or before a restart: ``web_form_nonces``)."""
        if not nonce:
            return None
        if nonce in self.nonces:
            return self.nonces[nonce]
        row = await self.db.fetchone("SELECT meeting_id FROM web_form_nonces WHERE nonce = ?",
                                                 (nonce[:100],))
        return str(row["meeting_id"]) if row is not None else None

    async def keep_nonce(self, nonce: str, meeting_id: str) -> None:
        """Write down durably that ``nonce`` started ``meeting_id`` (and forget nonces a month old)."""
        if not nonce:
            return
        now = self.clock.now().astimezone(UTC)
        await self.db.execute("INSERT INTO web_form_nonces(nonce, meeting_id, created_at) "
                                    "VALUES (?, ?, ?) ON CONFLICT (nonce) DO NOTHING",
                                    (nonce[:100], meeting_id, now.isoformat(timespec="seconds")))
        await self.db.execute("DELETE FROM web_form_nonces WHERE created_at < ?",
                                    ((now - timedelta(days=NONCE_DAYS)).isoformat(timespec="seconds"),))

    def remember(self, nonce: str, meeting_id: str, topic: str) -> None:
        """Record the meeting a form (its nonce) started, and its topic (for its page until it is on record)."""
        if nonce:
            self.nonces[nonce] = meeting_id
        self.topics[meeting_id] = topic
        for kept in (self.nonces, self.topics):
            while len(kept) > MAX_NONCES:
                kept.popitem(last=False)

    def note(self, kind: str, text: str) -> str:
        """Keep what a POST said (``kind``: ok or problem) for the page it redirects to; its token."""
        token = secrets.token_urlsafe(9)
        self.notes[token] = (kind, text)
        while len(self.notes) > MAX_NONCES:
            self.notes.popitem(last=False)
        return token

    def take_note(self, token: str) -> tuple[str, str] | None:
        """The note of ``token``, once (None: unknown, or shown already)."""
        return self.notes.pop(token, None) if token else None


WEB = web.AppKey("sabha_web", WebContext)


def context_of(request: web.Request) -> WebContext:
    """The pages' context (typed)."""
    return request.config_dict[WEB]

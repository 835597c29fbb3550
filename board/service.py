"""The board as one object: route an envelope, run the turn or command, return a reply.

:class:`Board` composes the soul store, prompt builder, session index, transcripts and
model registry. Channels call :meth:`Board.handle`; messages to the same session are
answered one at a time and in order, different sessions run concurrently. Before a
message that would call a model, :class:`board.spending.budget.Budget` may stop it (the daily
limits); every model call made while answering is recorded for the message's sender.
A stranger's message (``Envelope.is_public``) is held to the channel's :class:`PublicTerms`
before every model call it causes (see :mod:`board.spending.allowance`), and may convene a meeting
only when the owner allows it. Commands registered ``owner_only`` answer anyone else with
one line saying so (:data:`OWNER_ONLY`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from board.agent.guardrails import Guardrails, GuardrailSettings
from board.agent.migrations import MIGRATIONS as AGENT_MIGRATIONS
from board.agent.runner import AgentRunner, AgentSettings
from board.agent.tools import ToolRegistry
from board.clock import SYSTEM_CLOCK, Clock
from board.commands import about as about_commands
from board.commands import files as files_commands
from board.commands import followup as followup_commands
from board.commands import llm as llm_commands
from board.commands import memory as memory_commands
from board.commands import people as people_commands
from board.commands import room as room_commands
from board.commands.host import CommandHandler
from board.conversation.migrations import MIGRATIONS as CONVERSATION_MIGRATIONS
from board.conversation.sessions import Sessions
from board.conversation.transcript_rows import transcripts_for
from board.conversation.transcripts import TranscriptStore
from board.db import Migration
from board.decisions.migrations import MIGRATIONS as DECISION_MIGRATIONS
from board.decisions.predictions.migrations import MIGRATIONS as PREDICTION_MIGRATIONS
from board.decisions.recall.migrations import MIGRATIONS as RECALL_MIGRATIONS
from board.envelope import Envelope, Reply, ReplyKind, cleaned
from board.llm.registry import ProviderRegistry
from board.media.documents import DocumentReader
from board.media.migrations import MIGRATIONS as MEDIA_MIGRATIONS
from board.media.service import MediaService
from board.media.settings import MediaSettings
from board.media.understand import MediaFetcher
from board.memory.extract import MemoryWriter
from board.memory.facts import FactStore, MemorySettings
from board.memory.knowledge.base import KnowledgeBase, KnowledgeSettings
from board.memory.knowledge.fts import FTS5Unavailable
from board.memory.knowledge.migrations import MIGRATIONS as KNOWLEDGE_MIGRATIONS
from board.memory.knowledge.tool import knowledge_tool
from board.memory.migrations import MIGRATIONS as MEMORY_MIGRATIONS
from board.people import People, PeopleSettings
from board.people.migrations import MIGRATIONS as PEOPLE_MIGRATIONS
from board.roles import GENERAL, RosterSpec
from board.room.consult import ConsultSettings
from board.room.convene import BoardRoom
from board.room.migrations import MIGRATIONS as ROOM_MIGRATIONS
from board.room.settings import MEETINGS_OFF, MeetingSettings
from board.room.store import MeetingStore
from board.routing.router import Route, Router, unknown_role
from board.schedule import Schedule
from board.schedule.migrations import MIGRATIONS as SCHEDULE_MIGRATIONS
from board.spending.allowance import Allowance, Limit, PublicTerms, SpendGate, SpendRefused, allowed
from board.spending.budget import DAILY_REACHED, SENDER_REACHED, Budget, BudgetSettings, sender_id
from board.spending.ledger import Ledger, spending_for
from board.spending.migrations import MIGRATIONS as SPENDING_MIGRATIONS
from board.storage import Database, Dialect, StateURL, open_database
from board.workspace.prompt import PromptBuilder
from board.workspace.souls import LAST_GOOD_DIR, SoulStore

if TYPE_CHECKING:  # a meeting's modules load with the first meeting, web search's with its provider
    from board.agent.web_search import WebSearch, WebSearchSettings
    from board.decisions.reminders import Reminders
    from board.room.meeting import MeetingEvent

__all__ = ["BOARD_MIGRATIONS", "DB_FILE", "HELP_TEXT", "OWNER_ONLY", "Board", "BoardSettings"]

log = logging.getLogger("sabha.board")

DB_FILE = "sabha.db"
OWNER_ONLY = "/{command} is for the board's owner only."
BOARD_MIGRATIONS: tuple[Migration, ...] = (*CONVERSATION_MIGRATIONS, *SPENDING_MIGRATIONS, *MEMORY_MIGRATIONS,
                                           *ROOM_MIGRATIONS, *AGENT_MIGRATIONS, *MEDIA_MIGRATIONS,
                                           *PEOPLE_MIGRATIONS, *SCHEDULE_MIGRATIONS, *DECISION_MIGRATIONS,
                                           *PREDICTION_MIGRATIONS, *RECALL_MIGRATIONS, *KNOWLEDGE_MIGRATIONS)


@dataclass(frozen=True)
class BoardSettings:
    """What the board needs from config, as plain values (``board`` never imports ``bot``)."""

    workspace: Path
    data_dir: Path
    roster: RosterSpec = field(default_factory=RosterSpec)
    agent: AgentSettings = field(default_factory=AgentSettings)
    meetings: MeetingSettings = field(default_factory=MeetingSettings)
    consultation: ConsultSettings = field(default_factory=ConsultSettings)
    custom_rosters: tuple[tuple[str, tuple[str, ...]], ...] = ()
    max_message_chars: int = 20_000
    budget: BudgetSettings = field(default_factory=BudgetSettings)
    knowledge: KnowledgeSettings = field(default_factory=KnowledgeSettings)
    web_search: WebSearchSettings | None = None  # None: no provider, the web_search tool is not offered
    memory: MemorySettings = field(default_factory=MemorySettings)
    guardrails: GuardrailSettings = field(default_factory=GuardrailSettings)
    media: MediaSettings = field(default_factory=MediaSettings)
    people: PeopleSettings = field(default_factory=PeopleSettings)
    timezone: str = "UTC"  # the owner's time zone: due dates are read and shown in it (IANA name)
    #: Where the state lives (``state.url``); None: the SQLite file ``sabha.db`` in ``data_dir``.
    state: StateURL | None = None
    #: The most connections this process holds to a PostgreSQL state store.
    state_pool_size: int = 10

    def state_url(self) -> StateURL:
        """The configured state store, or the embedded SQLite file in ``data_dir``."""
        return self.state or StateURL(Dialect.SQLITE, path=self.data_dir / DB_FILE)


#: /help where plain messages go to the place's role (a forum topic); each channel passes its own
#: wording with :meth:`Board.describe_channel` (see :mod:`board.commands.about`).
HELP_TEXT = about_commands.help_text(about_commands.TOPIC_ADDRESSING, owner=True)


class Board:
    """The channel-agnostic board; build it with :meth:`open`."""

    def __init__(self, settings: BoardSettings, db: Database, providers: ProviderRegistry, *,
                 clock: Clock = SYSTEM_CLOCK) -> None:
        self.settings = settings
        self.clock = clock  # the one clock everything time-bound reads (board.clock)
        self.db = db
        self.schedule = Schedule(db, clock)  # reminders, reviews ...: rows claimed before they are sent
        self.providers = providers
        self.souls = SoulStore(settings.workspace, settings.roster, keep_dir=settings.data_dir / LAST_GOOD_DIR)
        self.prompts = PromptBuilder(settings.workspace)
        self.transcripts: TranscriptStore = transcripts_for(db, settings.data_dir)  # files or rows, by backend
        self.sessions = Sessions(db, self.transcripts)
        self.tools = ToolRegistry()
        self.ledger = Ledger(db)
        self.budget = Budget(self.ledger, settings.budget)
        self.spend = SpendGate(self.ledger)
        #: channel -> what strangers may do and cost there (a channel open to anyone sets it)
        self.public_terms: dict[str, PublicTerms] = {}
        agent = replace(settings.agent, vision_models=settings.media.vision_models)  # who sees pictures
        self.runner = AgentRunner(
            self.souls, self.prompts, self.sessions, providers, agent, tools=self.tools, ledger=self.ledger
        )
        self.runner.spend = self.spend
        # A lock lives while someone holds or waits for it; idle ones are dropped.
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self._rosters: dict[str, SoulStore] = {settings.roster.name: self.souls}
        self.room = BoardRoom(
            runner=self.runner,
            prompts=self.prompts,
            souls_for=self.souls_for,
            default_roster=settings.roster.name,
            store=MeetingStore(db),
            meeting_settings=settings.meetings,
            consult_settings=settings.consultation, clock=clock,
        )
        for tool in self.room.tools():
            wanted = settings.consultation.enabled if tool.spec.name == "consult" else settings.meetings.enabled
            if wanted:
                self.tools.register(tool)
        self.commands: dict[str, tuple[CommandHandler, str]] = {}
        #: channel -> how people address the board there (its /help), as the channel said
        self.addressing: dict[str, about_commands.Addressing] = {}
        self.owner_only: set[str] = set()
        self._register_builtin_commands()
        llm_commands.register(self, ledger=self.ledger, runner=self.runner)
        self._register_room_commands()
        self.room.subscribe(self._remember_meeting)
        self.reminders = self._follow_through()  # action items' due dates and reminders (issue 27)
        # What agents know (issue 16): user memory, the knowledge base, web search; guardrails on the way out.
        self.facts = FactStore(db, settings.memory)
        self.guardrails = Guardrails(settings.guardrails, db, models=self.configured_models)
        self.knowledge = _open_knowledge(settings, db)
        self.web_search: WebSearch | None = None
        if settings.web_search is not None:
            from board.agent.web_search import WebSearch

            self.web_search = WebSearch(settings.web_search, db)
        if self.knowledge is not None:
            self.tools.register(knowledge_tool(self.knowledge))
        if self.web_search is not None:
            self.tools.register(self.web_search.tool())
        self.runner.guardrails = self.guardrails
        #: voice notes, pictures and documents: fetched and read in the lane (bot.intake), laid out here
        self.media = MediaService(settings.media, settings.data_dir, db, providers=providers, ledger=self.ledger,
                                  spend=self.spend, retry=settings.agent.retry, spending=self.spending)
        self.media.register(DocumentReader(self.knowledge))  # long documents: the conversation's knowledge scope
        files_commands.register(self, self.media.store)
        #: one person across channels: linked accounts share memory and budgets (board.people)
        self.people = People(db, settings.people, facts=self.facts)
        self.budget.keys_of = self.people.keys_of  # a person's budget counts what each linked account spent
        people_commands.register(self, self.people)
        #: memory that writes itself (memory.auto_extract): facts heard after each turn, off its critical path
        self.memory_writer: MemoryWriter | None = None
        self.memory_talk: memory_commands.MemoryTalk | None = None
        if settings.memory.enabled:
            self.tools.register(self.facts.tool())
            self.runner.memory = self.facts
            if settings.memory.auto_extract:
                self.memory_writer = MemoryWriter(self.facts, self.runner)
                self.runner.turn_listeners.append(self.memory_writer.heard)
            self.memory_talk = memory_commands.register(self, self.facts, self.memory_writer, self.people)

    @classmethod
    async def open(cls, settings: BoardSettings, providers: ProviderRegistry | None = None, *,
                   migrations: Iterable[Migration] = (), clock: Clock = SYSTEM_CLOCK) -> Board:
        """Open the state db under ``data_dir`` (the board's migrations plus ``migrations``,
        the tables of the daemon's intake and channels) and build the board on ``clock``."""
        if not settings.workspace.is_dir():
            raise FileNotFoundError(
                f"workspace {settings.workspace} does not exist; run `sabha init` to create one"
            )
        if settings.data_dir.exists() and not settings.data_dir.is_dir():
            raise FileNotFoundError(
                f"data_dir {settings.data_dir} is a file, not a folder; point data_dir at a folder for transcripts"
            )
        db = await open_database(settings.state_url(), (*BOARD_MIGRATIONS, *migrations),
                                 pool_size=settings.state_pool_size)
        try:
            board = cls(settings, db, providers or ProviderRegistry(), clock=clock)
        except BaseException:
            await db.close()
            raise
        if board.knowledge is not None:
            try:  # index what changed since the last run, so the first search finds it
                await board.knowledge.sync()
            except Exception:  # the watcher and later searches try again
                log.exception("knowledge: indexing %s failed", board.knowledge.folder)
        return board

    def warm_up(self) -> list[str]:
        """Build the providers of every model the board may call (the default, the fallbacks,
        the cheap model, each soul's own), so the first answer does not wait for an SDK to
        import; returns the models that cannot be used, one line each."""
        return self.providers.prepare(self.configured_models())

    def configured_models(self) -> list[str]:
        """Every model the board may call now: the default, the fallbacks, the cheap model, each
        soul's own (the guardrails scrub all their names from answers)."""
        agent = self.runner.settings
        models = [agent.default_model, *agent.fallbacks, *([agent.cheap_model] if agent.cheap_model else [])]
        for store in list(self._rosters.values()):
            models += [profile.model for profile in store.profiles() if profile.model]
        return models

    def souls_for(self, roster: str) -> SoulStore:
        """The soul store of ``roster`` (the configured one, or another on demand for meetings)."""
        store = self._rosters.get(roster)
        if store is None:
            spec = RosterSpec.build(
                roster,
                custom={name: list(roles) for name, roles in self.settings.custom_rosters},
                overrides=dict(self.settings.roster.overrides),
            )
            store = self._rosters[roster] = SoulStore(self.settings.workspace, spec,
                                                      keep_dir=self.settings.data_dir / LAST_GOOD_DIR)
        return store

    async def close(self) -> None:
        """Stop running meetings (recorded as cancelled), close the model clients and the state db."""
        await self.room.drain(timeout=0)
        if self.memory_writer is not None:  # facts still being heard: a few seconds to finish, then abandoned
            await self.memory_writer.drain()
        await self.providers.close()
        if self.web_search is not None:
            await self.web_search.close()
        if self.knowledge is not None:
            self.knowledge.close()
        await self.transcripts.flush()  # rows still queued (PostgreSQL) before the pool goes
        await self.db.close()

    async def watch(self, stop: asyncio.Event) -> None:
        """Apply edits of soul files and re-index knowledge documents as they are saved, until ``stop``."""
        await asyncio.gather(self.souls.watch(stop), *([self.knowledge.watch(stop)] if self.knowledge else []))

    async def __aenter__(self) -> Board:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- routing -----------------------------------------------------------------

    def router(self) -> Router:
        """A router over the roles available right now."""
        profiles = self.souls.profiles()
        return Router([p.role for p in profiles], {p.role: p.name for p in profiles},
                      titles={p.role: p.title for p in profiles}, emoji={p.role: p.emoji for p in profiles},
                      addressing=not self.settings.roster.single)

    def lock_for(self, key: str) -> asyncio.Lock:
        """The lock that keeps one session's turns in order."""
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock

    async def handle(self, envelope: Envelope, *, route: Route | None = None) -> Reply:
        """Answer one envelope: a chat turn, a command, or an error reply. Never raises
        for bad input; the reply says what went wrong and what to do.

        ``route``: what :meth:`router` made of this very envelope a moment ago (a caller that
        looked at the route first, like ``sabha ask``), so the souls are not read twice; it
        is made again when cleaning changed the envelope."""
        given = envelope
        envelope = cleaned(envelope)  # lone surrogates cannot be written to a transcript
        limit = self.settings.max_message_chars
        if len(envelope.text) > limit:
            log.warning("message from %s on %s is %d characters (limit %d); not sent to any model",
                        envelope.sender, envelope.channel, len(envelope.text), limit)
            return self._system_reply(
                envelope, envelope.role_hint or GENERAL,
                f"That message is {len(envelope.text):,} characters long; the limit is {limit:,}. "
                "Send the part that matters, or a summary, and I will answer it.", kind="error")
        envelope = await self.identify(envelope)  # a linked person: their key, maybe a shared session
        if route is None or envelope is not given:
            route = self.router().route(envelope)
        log.debug("route: %s%s (%s)", route.role, "".join(f", {r}" for r in route.also), route.reason)
        if route.error:
            return self._system_reply(envelope, route.role, route.error, kind="error")
        if route.kind == "chat" and not route.text and not envelope.attachments:
            return self._system_reply(envelope, route.role, "Send a message with some text.", kind="error")
        sender = sender_id(envelope)
        allowance = self.allowance_for(envelope) if envelope.is_public else None
        with spending_for(sender, scope=allowance.terms.scope if allowance else None), allowed(allowance):
            reply = await self._answer(envelope, route, sender, allowance)
        return self._with_owner_note(envelope, reply)

    async def _answer(self, envelope: Envelope, route: Route, sender: str, allowance: Allowance | None) -> Reply:
        """The reply to a routed envelope, inside its sender's spending context."""
        if route.kind == "meeting" and not self.settings.meetings.enabled:
            return self._system_reply(envelope, route.role, MEETINGS_OFF, kind="error")
        if allowance is not None and route.kind == "meeting" and not allowance.terms.meetings:
            return self._system_reply(envelope, route.role, allowance.terms.meetings_text, kind="error")
        if route.kind == "chat" and self.memory_talk is not None and not envelope.attachments:
            said = await self.memory_talk(envelope, route.text)  # "what do you remember about me": from the store
            if said is not None:
                return self._system_reply(envelope, route.role, said, kind="command")
        stop = await self.budget.check(sender, is_owner=envelope.is_owner) if _calls_model(route) else None
        if stop is not None:
            return self._system_reply(envelope, route.role, stop.text, kind="error")
        refused = await self.spend.check() if allowance is not None and _calls_model(route) else None
        if refused is not None:  # a limit is already closed for today
            return self._system_reply(envelope, route.role, refused.text, kind="error")
        try:
            if route.kind in ("command", "meeting"):
                return await self.run_command(envelope, route)
            return await self._chat(envelope, route)
        except SpendRefused as exc:  # a model call would have passed a stranger's limit: it was not made
            return self._system_reply(envelope, route.role, exc.text, kind="error")

    @contextlib.contextmanager
    def spending(self, envelope: Envelope) -> Iterator[None]:
        """The model calls made inside the block are ``envelope``'s sender's, held to a stranger's
        limits (what :meth:`handle` sets; the media service's transcriptions and spoken replies too)."""
        allowance = self.allowance_for(envelope) if envelope.is_public else None
        with spending_for(sender_id(envelope), scope=allowance.terms.scope if allowance else None), \
                allowed(allowance):
            yield

    async def read_media(self, envelope: Envelope, fetcher: MediaFetcher | None) -> Envelope:
        """``envelope`` with its attachments fetched and read (:meth:`MediaService.prepare`), unless the
        sender's budget is spent: then nothing is downloaded or transcribed (that would be paid for) and
        :meth:`handle` answers with the budget's line, as for a typed message."""
        if not envelope.attachments:
            return envelope
        envelope = await self.identify(envelope)
        if await self.budget.check(sender_id(envelope), is_owner=envelope.is_owner) is not None:
            log.info("media of message %s from %s on %s not read: the budget is spent", envelope.message_id,
                     envelope.sender, envelope.channel)
            return envelope
        return await self.media.prepare(envelope, fetcher)

    async def identify(self, envelope: Envelope) -> Envelope:
        """``envelope`` with its linked person, if any (:meth:`People.identify`); a failed lookup logs and
        answers as the account alone rather than not at all."""
        try:
            return await self.people.identify(envelope)
        except Exception:
            log.exception("people: looking up the person of %s on %s failed", envelope.sender, envelope.channel)
            return envelope

    def set_public_terms(self, terms: PublicTerms) -> None:
        """What strangers may do and cost on ``terms.channel`` (a channel open to anyone; a reload again)."""
        self.public_terms[terms.channel] = terms

    def allowance_for(self, envelope: Envelope) -> Allowance:
        """The limits every model call for a stranger's ``envelope`` is held to: the channel's public cap
        (nothing, when the channel set no terms), and the budget's per-sender and daily limits when set."""
        terms = self.public_terms.get(envelope.channel) or PublicTerms(envelope.channel, daily_usd=0.0)
        limits = [Limit("public", terms.scope, terms.daily_usd, terms.cap_text)]
        budget = self.budget.settings
        if budget.per_sender_daily_usd is not None:
            limits.append(Limit("sender", sender_id(envelope), budget.per_sender_daily_usd, SENDER_REACHED))
        if budget.daily_usd is not None:
            limits.append(Limit("daily", "*", budget.daily_usd, DAILY_REACHED))
        return Allowance(terms, tuple(limits))

    async def _chat(self, envelope: Envelope, route: Route) -> Reply:
        """One turn of the route's role; with several roles mentioned, each answers in its own
        session, in order, and the reply carries every answer under its speaker's label.

        Attachments (already read, :mod:`board.media`) join the text as quoted data, pictures as
        image parts; what could not be read is said once, before the answer (alone, with no
        model call, when nothing else was sent)."""
        await self.people.said(envelope, route.text)  # for the note the person's other channels show
        given = self.media.turn_input(envelope, route.text)
        if given.empty:
            return self._system_reply(envelope, route.role, media_notice(given.notices) or
                                      "Send a message with some text.", kind="error")
        async with self.lock_for(route.session_key):
            reply = await self.runner.turn(route.role, route.session_key, envelope, given.text, images=given.images)
        parts = [reply.text]
        router = self.router()
        for role in route.also:
            key = router.key_for(envelope, role)
            async with self.lock_for(key):
                more = await self.runner.turn(role, key, envelope, given.text, images=given.images)
            parts.append(f"{more.label}: {more.text}")
        notice = media_notice(given.notices)
        if notice:
            parts.insert(0, notice)
        return replace(reply, text="\n\n".join(parts)) if len(parts) > 1 else reply

    def _with_owner_note(self, envelope: Envelope, reply: Reply) -> Reply:
        """The owner's reply carries what the budget has not told them yet (once a day per limit)."""
        if not envelope.is_owner:
            return reply
        note = self.budget.owner_note()
        return reply if note is None else replace(reply, text=f"{reply.text}\n\n{note}")

    # -- commands ----------------------------------------------------------------

    def register_command(self, name: str, handler: CommandHandler, help_line: str, *,
                         owner_only: bool = False) -> None:
        """Add a slash command (channels add their own, e.g. /cost, /status); an ``owner_only`` one
        answers anyone but the owner with one line saying so."""
        self.commands[name] = (handler, help_line)
        if owner_only:
            self.owner_only.add(name)
        else:
            self.owner_only.discard(name)

    async def run_command(self, envelope: Envelope, route: Route) -> Reply:
        """Run a routed command and wrap its text as a reply from the route's role."""
        entry = self.commands.get(route.command or "")
        if entry is None:
            return self._system_reply(
                envelope, route.role, f"Unknown command /{route.command}. Send /help for the list.", kind="error"
            )
        if route.command in self.owner_only and not envelope.is_owner:
            return self._system_reply(envelope, route.role, OWNER_ONLY.format(command=route.command), kind="error")
        handler, _ = entry
        text = await handler(envelope, route)
        return self._system_reply(envelope, route.role, text, kind="command")

    def _follow_through(self) -> Reminders:
        """Due dates and reminders of action items: ``/due``, ``/snooze``, ``/done`` and ``/actions``
        with dates; a decision's reminders scheduled once it is out, and at start what a crash left."""
        from board.decisions.reminders import Reminders

        reminders = Reminders(self.room.store, self.schedule, self.clock, ZoneInfo(self.settings.timezone),
                              voice=self._voice)
        followup_commands.register(self, reminders)
        self.room.subscribe(self._follow_decision)
        self.schedule.at_start(reminders.sync)
        return reminders

    def _voice(self, role: str) -> tuple[str, str] | None:
        """(name, emoji) of ``role`` on this board, for what Sabha says in its name."""
        profile = next((p for p in self.souls.profiles() if p.role == role), None)
        return (profile.name, profile.emoji) if profile is not None else None

    async def _follow_decision(self, event: MeetingEvent) -> None:
        """A decision was recorded: its action items' due dates are read and their reminders set."""
        from board.room.meeting import MeetingEventKind

        if event.kind is MeetingEventKind.DECISION:
            await self.reminders.decided(event.meeting_id)

    async def _remember_meeting(self, event: MeetingEvent) -> None:
        """A decided meeting leaves its record in the asking session (the chair's, where it was asked)
        and in every participant's own session for that place, so later turns can answer from it."""
        from board.room.meeting import MeetingEventKind
        from board.room.record import meeting_entry

        origin, decision = event.origin, event.data.get("decision")
        if event.kind is not MeetingEventKind.DECISION or origin is None or not isinstance(decision, dict):
            return
        router = self.router()
        chair = event.role or GENERAL
        for role in dict.fromkeys([chair, *event.data.get("participants", [])]):
            if role not in router.roles:
                continue  # a member of another roster has no session on this board
            key = router.key_for(origin, role)
            try:
                async with self.lock_for(key):
                    transcript = await self.sessions.open(key, role)
                    transcript.append(meeting_entry(event.meeting_id, event.topic, decision, chair=chair))
                    await transcript.sync()
            except Exception:  # the decision is recorded in the db either way
                log.exception("meeting %s: writing its record to %s failed", event.meeting_id, key)

    def _system_reply(self, envelope: Envelope, role: str, text: str, *, kind: ReplyKind) -> Reply:
        try:
            profile = self.souls.profile(role)
            name, emoji = profile.name, profile.emoji
        except KeyError:
            name, emoji = "Sabha", "🪑"
        return Reply.to(envelope, role=role, name=name, emoji=emoji, text=text, kind=kind)

    def _register_builtin_commands(self) -> None:
        self.register_command("help", self._cmd_help, "/help: what you can say")
        self.register_command("start", self._cmd_help, "/start: introduction")
        self.register_command("roles", self._cmd_roles, "/roles: who sits on the board")
        self.register_command("reset", self._cmd_reset, "/reset [role]: start a fresh conversation")
        self.register_command("souls", self._cmd_souls, "/souls: soul files and versions", owner_only=True)

    def _register_room_commands(self) -> None:
        """/meeting, /actions ... and ratification (issue 27): the decisions' verdicts and the owner's
        /ratify, /veto, /revisit, whose follow-up meetings are scheduled work; the members' predictions,
        their track record and the reviews of decisions (/predictions, /resolve, /stats, /review)."""
        from board.commands import decisions as decision_commands
        from board.commands import predictions as predictions_commands
        from board.decisions.ratify import DecisionBook
        from board.room import followup

        room_commands.register(self, self.room)
        self.decisions = DecisionBook(self.db, self.clock)
        follow_ups = followup.FollowUps(self.room, self.decisions, self.schedule, self.clock)
        followup.register(follow_ups)
        decision_commands.register(self, self.decisions, follow_ups.plan)
        predictions_commands.register(self, self.room, self.schedule, lambda: self.settings.meetings,
                                      ZoneInfo(self.settings.timezone))

    def describe_channel(self, channel: str, addressing: about_commands.Addressing) -> None:
        """How people address the board on ``channel`` (the first rows of its /help)."""
        self.addressing[channel] = addressing

    async def _cmd_help(self, envelope: Envelope, route: Route) -> str:
        def more(envelope: Envelope) -> list[str]:
            hidden = {*about_commands.BUILTIN, *(() if self.settings.meetings.enabled else ("meeting",))}
            return [line for name, (_, line) in sorted(self.commands.items())
                    if name not in hidden and (envelope.is_owner or name not in self.owner_only)]

        return about_commands.answer_help(envelope, self.addressing, more, single=self.settings.roster.single)

    async def _cmd_roles(self, envelope: Envelope, route: Route) -> str:
        return about_commands.roles_text(self.settings.roster.name, self.souls)

    def command_target(self, envelope: Envelope, route: Route) -> tuple[str, str] | str:
        """For ``/cmd [role]``: (role, session key) of the named role or the place's role,
        or an error text naming the valid roles."""
        router = self.router()
        role = route.role
        if route.text:
            word = route.text.split()[0]
            found = router.find_role(word)
            if found is None:
                return unknown_role(word, router.roles)
            role = found
        return role, router.key_for(envelope, role)

    async def _cmd_reset(self, envelope: Envelope, route: Route) -> str:
        target = self.command_target(envelope, route)
        if isinstance(target, str):
            return target
        role, key = target
        async with self.lock_for(key):
            old, new = await self.sessions.reset(key)
        archived = f" The previous one ({old.session_id}) is archived." if old else ""
        return f"Started a fresh conversation with {role} ({new.session_id}).{archived}"

    async def _cmd_souls(self, envelope: Envelope, route: Route) -> str:
        return "\n".join(about_commands.soul_lines(self.souls, self.settings.workspace))


def _open_knowledge(settings: BoardSettings, db: Database) -> KnowledgeBase | None:
    """The knowledge base (its index in ``db`` when that is PostgreSQL), or None when it is off or this SQLite
    lacks FTS5 (logged with what to do)."""
    if not settings.knowledge.enabled:
        return None
    try:
        return KnowledgeBase.open(settings.workspace, settings.data_dir, settings.knowledge, db=db)
    except FTS5Unavailable as exc:
        log.error("the knowledge base is off (search_knowledge_base is not offered): %s", exc)
        return None


_MODEL_COMMANDS = {"compact"}  # commands that call a model (besides meetings)


def media_notice(notices: Iterable[str]) -> str:
    """What could not be read, as one paragraph for the sender ("" when everything was read)."""
    lines = [f"⚠️ {n}" for n in dict.fromkeys(notices)]
    return "\n".join(lines)


def _calls_model(route: Route) -> bool:
    """Whether answering ``route`` calls a model (what the budget guards)."""
    return route.kind in ("chat", "meeting") or (route.kind == "command" and route.command in _MODEL_COMMANDS)

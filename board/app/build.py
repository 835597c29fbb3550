"""The wiring closet: :func:`build_parts` makes every part of a board, in dependency order, complete.

Every collaborator and observer is a constructor argument: nothing is assigned onto a part after it is
built (``tests/test_architecture.py`` walks this module for it). Two parts need each other's result,
and each such pair is closed by a function that reads a local of this module at call time, never by
assigning onto a part: the runner's listener hands a finished turn to the memory writer (which calls the
runner), and the rosters read the runner's live settings (the guardrails, built before the runner, ask them).
Registries are filled through their own verbs (``tools.register``, ``commands.register_command``).
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from board.agent.guardrails import Guardrails
from board.agent.locks import SessionLocks
from board.agent.outside import ConsentGate
from board.agent.runner import AgentRunner, AgentSettings, RunnerHooks
from board.agent.tools import ToolRegistry
from board.agent.turn import TurnHeard, TurnListener
from board.answer import Door, Money
from board.app.meetings import DecisionTrail
from board.app.parts import Observers, Parts
from board.app.rosters import Rosters
from board.app.settings import DB_FILE, BoardSettings
from board.clock import Clock
from board.commands import builtin as builtin_commands
from board.commands import consent as consent_commands
from board.commands import controls as control_commands
from board.commands import files as files_commands
from board.commands import followup as followup_commands
from board.commands import llm as llm_commands
from board.commands import memory as memory_commands
from board.commands import people as people_commands
from board.commands import recall as recall_commands
from board.commands import room as room_commands
from board.commands import standing as standing_commands
from board.commands.registry import CommandRegistry
from board.conversation.sessions import Sessions
from board.conversation.transcript_rows import transcripts_for
from board.llm.pricing import PriceTable
from board.llm.registry import ProviderRegistry
from board.media.documents import DocumentReader
from board.media.service import MediaService
from board.memory.extract import MemoryWriter
from board.memory.facts import FactStore
from board.memory.knowledge.base import KnowledgeBase
from board.memory.knowledge.fts import FTS5Unavailable
from board.memory.knowledge.tool import knowledge_tool
from board.people import People
from board.recall.embedder import Embedder
from board.recall.indexer import RecallIndexer, forget_accounts
from board.recall.knowledge import KnowledgeSearch
from board.recall.lexical import DecisionSearch, PassageSearch
from board.recall.passages import Retriever
from board.recall.semantic import VectorSearch
from board.recall.service import RecallService
from board.recall.tool import recall_tool
from board.recall.vector_index import VectorIndexer
from board.recall.vector_store import VectorStore, vectors_problem
from board.room.convene import BoardRoom
from board.room.store import MeetingStore
from board.room.subscribers import Bookkeeping, ToldFirst
from board.routing.cached import RouterCache
from board.schedule import Schedule, WorkKind
from board.schedule.standing import StandingWork
from board.spending.allowance import SpendGate
from board.spending.budget import Budget
from board.spending.ledger import Ledger, start_of_day
from board.storage import Database, Dialect
from board.tools.consent import ApprovalStore, OwnerConsent
from board.tools.mcp.servers import McpServers
from board.workspace.prompt import PromptBuilder
from board.workspace.souls import LAST_GOOD_DIR, SoulStore

if TYPE_CHECKING:  # a meeting's modules load with the first meeting, web search's with its provider
    from board.agent.web_search import WebSearch
    from board.decisions.ratify import DecisionBook
    from board.decisions.reminders import Reminders
    from board.memory.consolidation.run import Consolidator
    from board.room.standing import StandingMeetings

__all__ = ["build_parts"]

log = logging.getLogger("sabha.board")


@dataclass(frozen=True, kw_only=True)
class _Base:
    """The parts below the turn: stores, money, people, routing."""

    schedule: Schedule
    souls: SoulStore
    prompts: PromptBuilder
    sessions: Sessions
    ledger: Ledger
    facts: FactStore
    people: People
    budget: Budget
    spend: SpendGate
    money: Money
    locks: SessionLocks


def _base(settings: BoardSettings, db: Database, clock: Clock, observers: Observers) -> _Base:
    souls = SoulStore(settings.workspace, settings.roster, keep_dir=settings.data_dir / LAST_GOOD_DIR,
                      observers=observers.souls)
    ledger = Ledger(db, observers=observers.model_calls)
    facts = FactStore(db, settings.memory)
    people = People(db, settings.people, facts=facts)
    budget = Budget(ledger, settings.budget, keys_of=people.keys_of)  # a person's budget: every linked account
    return _Base(schedule=Schedule(db, clock), souls=souls, prompts=PromptBuilder(settings.workspace),
                 sessions=Sessions(db, transcripts_for(db, settings.data_dir)), ledger=ledger, facts=facts,
                 people=people, budget=budget, spend=SpendGate(ledger), money=Money(budget), locks=SessionLocks())


def _consent_gate(settings: BoardSettings, base: _Base, clock: Clock) -> OwnerConsent:
    """What a tool that does not only read passes before it runs: the owner's Allow, asked in the conversation's
    place and recorded before the call (``/allow`` and ``/deny`` are registered once the commands exist)."""
    souls = base.souls

    def voice(role: str) -> tuple[str, str] | None:  # (name, emoji) of the advisor that asks
        profile = next((p for p in souls.profiles() if p.role == role), None)
        return (profile.name, profile.emoji) if profile is not None else None

    return OwnerConsent(ApprovalStore(base.ledger.db), base.schedule, clock, settings.consent, voice=voice)


def _outside(settings: BoardSettings, base: _Base, consent: ConsentGate) -> McpServers:
    """The MCP servers of ``mcp.servers``; a role's tools list (soul or ``board.agents``) says which it was given."""
    souls = base.souls

    def grants(role: str) -> tuple[str, ...] | None:
        return souls.profile(role).tools if souls.has(role) else None

    return McpServers(settings.mcp, grants=grants, consent=consent,
                      log_dir=settings.data_dir / "mcp")


def _consolidator(settings: BoardSettings, base: _Base, runner: AgentRunner, clock: Clock) -> Consolidator | None:
    """Memory that tidies itself (``memory.consolidation``): the handler of its scheduled runs; None when memory is
    off. Its modules load with the memory writer (they are imported here only)."""
    if not settings.memory.enabled:
        return None
    from board.memory.consolidation.run import Consolidator

    return Consolidator(base.facts, runner, base.schedule, clock, budget=base.budget, zone=settings.timezone)


def _runner(settings: BoardSettings, base: _Base, providers: ProviderRegistry, tools: ToolRegistry,
            observers: Observers, outside: McpServers,
            clock: Clock) -> tuple[AgentRunner, Rosters, Guardrails, MemoryWriter | None, Consolidator | None]:
    """The runner with its memory, guardrails, spend gate and turn observers; the memory writer that hears it and
    the consolidation it schedules."""
    writer: MemoryWriter | None = None
    runner: AgentRunner

    def heard(turn: TurnHeard) -> None:  # memory that writes itself, off the turn's critical path
        if writer is not None:
            writer.heard(turn)

    def agent() -> AgentSettings:
        return runner.settings  # the live settings (a reload replaces them)

    rosters = Rosters(settings, base.souls, agent)
    guardrails = Guardrails(settings.guardrails, base.ledger.db, models=rosters.configured_models)
    memory = settings.memory
    listeners: tuple[TurnListener, ...] = (heard,) if memory.enabled and memory.auto_extract else ()
    hooks = RunnerHooks(memory=base.facts if memory.enabled else None, guardrails=guardrails, spend=base.spend,
                        turn_observers=observers.turns, turn_listeners=listeners, outside=outside,
                        outside_ready=outside.ensure)
    vision = replace(settings.agent, vision_models=settings.media.vision_models)  # who sees pictures
    runner = AgentRunner(base.souls, base.prompts, base.sessions, providers, vision, tools=tools,
                         ledger=base.ledger, hooks=hooks)
    consolidator = _consolidator(settings, base, runner, clock)
    if listeners:
        writer = MemoryWriter(base.facts, runner, consolidator.noticed if consolidator is not None else None)
    return runner, rosters, guardrails, writer, consolidator


def _room(settings: BoardSettings, base: _Base, runner: AgentRunner, rosters: Rosters, clock: Clock,
          commands: CommandRegistry) -> tuple[BoardRoom, Reminders, DecisionBook]:
    """The room (meetings, consultations) subscribed to its decisions' trail; the decision book and reminders."""
    from board.commands import decisions as decision_commands
    from board.commands import predictions as predictions_commands
    from board.decisions.ratify import DecisionBook
    from board.decisions.reminders import Reminders
    from board.room import followup
    from board.room.pending import StartGate

    store = MeetingStore(base.ledger.db)
    zone = ZoneInfo(settings.timezone)
    souls = base.souls

    def voice(role: str) -> tuple[str, str] | None:  # (name, emoji) of role, for what Sabha says in its name
        profile = next((p for p in souls.profiles() if p.role == role), None)
        return (profile.name, profile.emoji) if profile is not None else None

    reminders = Reminders(store, base.schedule, clock, zone, voice=voice)
    trail = DecisionTrail(router=commands.router, locks=base.locks, sessions=base.sessions, reminders=reminders)
    room = BoardRoom(runner=runner, prompts=base.prompts, souls_for=rosters.souls_for,
                     default_roster=settings.roster.name, store=store, meeting_settings=settings.meetings,
                     consult_settings=settings.consultation, clock=clock,
                     # items dated before a view shows them; the records in the sessions after the meeting returned
                     subscribers=[Bookkeeping(trail.remember), ToldFirst(trail.follow)],
                     gate=StartGate(base.ledger.db, base.schedule, clock))
    llm_commands.register(commands, ledger=base.ledger, runner=runner)
    room_commands.register(commands, room)
    control_commands.register(commands, room)
    decisions = DecisionBook(base.ledger.db, clock)
    follow_ups = followup.FollowUps(room, decisions, base.schedule, clock)
    followup.register(follow_ups)
    decision_commands.register(commands, decisions, follow_ups.plan)
    predictions_commands.register(commands, room, base.schedule, lambda: settings.meetings, zone)
    followup_commands.register(commands, reminders)
    base.schedule.at_start(reminders.sync)
    return room, reminders, decisions


def _standing_meetings(settings: BoardSettings, base: _Base, room: BoardRoom, clock: Clock,
                       tools: ToolRegistry) -> StandingMeetings:
    """Standing items' meetings and roundtables (the STANDING_MEETING handler), and the chair's roundtable tool
    (offered while meetings are on). The roundtable's modules load with the first roundtable."""
    from board.room.roundtable_tool import RoundtableTool
    from board.room.standing import StandingMeetings

    standing = StandingMeetings(room, base.budget, clock, ZoneInfo(settings.timezone))
    base.schedule.register(WorkKind.STANDING_MEETING, standing.handle)
    if settings.meetings.enabled:
        tools.register(RoundtableTool(room, base.budget, clock).tool())
    return standing


def _standing(settings: BoardSettings, base: _Base, runner: AgentRunner, commands: CommandRegistry,
              clock: Clock, meetings: StandingMeetings) -> StandingWork:
    """Standing work (``/every``): its runs on the schedule, a brief's opening by the cheap model, its meetings and
    roundtables held by ``meetings`` (:mod:`board.room.standing`)."""
    from board.app.brief_writer import ModelBriefWriter

    souls = base.souls

    def voice(role: str) -> tuple[str, str] | None:
        profile = next((p for p in souls.profiles() if p.role == role), None)
        return (profile.name, profile.emoji) if profile is not None else None

    writer = ModelBriefWriter(runner, base.budget, clock=clock)
    standing = StandingWork(base.schedule, clock, writer, zone=settings.timezone, meetings=meetings,
                            settings=replace(settings.standing, daily_budget=settings.budget.daily_usd), voice=voice)
    standing_commands.register(commands, standing)
    return standing


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


def _web_search(settings: BoardSettings, db: Database) -> WebSearch | None:
    if settings.web_search is None:
        return None
    from board.agent.web_search import WebSearch

    return WebSearch(settings.web_search, db)


def _recall(base: _Base, db: Database, knowledge: KnowledgeBase | None, tools: ToolRegistry,
            commands: CommandRegistry, vectors: VectorIndexer | None) -> tuple[RecallService, RecallIndexer]:
    """One recall (issue 43) over the lexical retrievers (the knowledge base when it is on, and the vector search
    when ``vectors`` is given), offered as the ``recall`` tool and ``/recall``; its background indexers run in
    :meth:`board.app.board.Board.watch`."""
    retrievers: list[Retriever] = [PassageSearch(db), DecisionSearch(db)]
    if knowledge is not None:
        retrievers.append(KnowledgeSearch(knowledge))
    if vectors is not None:
        retrievers.append(VectorSearch(vectors.store, vectors.embedder))
    service = RecallService(retrievers)
    indexer = RecallIndexer(db, base.sessions, base.sessions.transcripts)
    tools.register(recall_tool(service, db, offered=lambda: indexer.holds))  # once there is something to find
    recall_commands.register(commands, service, db)
    return service, indexer


def _recall_vectors(settings: BoardSettings, base: _Base, db: Database, prices: PriceTable) -> VectorIndexer | None:
    """Recall by meaning when ``memory.embedding_model`` is set and vectors can be kept here (sqlite-vec on the
    SQLite state db; on PostgreSQL pgvector, which the store looks for on first use); else None, logged with why
    and what to do (recall stays lexical)."""
    embedding = settings.recall_embedding
    if embedding is None:
        return None
    problem = embedding.problem() or vectors_problem(db.dialect)
    if problem is not None:
        log.warning("recall by meaning is off (recall stays lexical): %s", problem)
        return None
    path = None if db.dialect is Dialect.POSTGRES else settings.state_url().path or settings.data_dir / DB_FILE
    embedder = Embedder(embedding, base.ledger, prices)
    log.info("recall by meaning: passages are embedded with %s in the background", embedding.model)
    return VectorIndexer(db, VectorStore(db, path), embedder,
                         allowed=functools.partial(_daily_budget_left, base.budget))


async def _daily_budget_left(budget: Budget) -> str | None:
    """Why background spending must wait: today's spend has reached ``budget.daily_usd`` (None: it may go on)."""
    limit = budget.settings.daily_usd if budget.settings.enabled else None
    if limit is None:
        return None
    spent = await budget.ledger.spent(since=start_of_day(budget.clock()))
    return f"today's spend ${spent:.4f} has reached budget.daily_usd ${limit:.2f}" if spent >= limit else None


def build_parts(settings: BoardSettings, db: Database, providers: ProviderRegistry, *,
                clock: Clock, observers: Observers) -> Parts:
    """Every part of the board on ``db``, in dependency order, each complete when made."""
    base = _base(settings, db, clock, observers)
    consent = _consent_gate(settings, base, clock)
    tools = ToolRegistry()
    outside = _outside(settings, base, consent)
    runner, rosters, guardrails, writer, consolidator = _runner(settings, base, providers, tools, observers, outside,
                                                                clock)
    router = RouterCache(base.souls.profiles, addressing=not settings.roster.single)  # rebuilt when roles change
    commands = CommandRegistry(base.souls, router, base.locks)
    builtin_commands.register(builtin_commands.Builtins(
        registry=commands, souls=base.souls, sessions=base.sessions, workspace=settings.workspace,
        roster=settings.roster.name, single=settings.roster.single, meetings_enabled=settings.meetings.enabled))
    room, reminders, decisions = _room(settings, base, runner, rosters, clock, commands)
    consent_commands.register(commands, consent)
    for tool in room.tools():
        wanted = settings.consultation.enabled if tool.spec.name == "consult" else settings.meetings.enabled
        if wanted:
            tools.register(tool)
    standing_meetings = _standing_meetings(settings, base, room, clock, tools)
    standing = _standing(settings, base, runner, commands, clock, standing_meetings)
    knowledge, web_search = _open_knowledge(settings, db), _web_search(settings, db)
    if knowledge is not None:
        tools.register(knowledge_tool(knowledge))
    if web_search is not None:
        tools.register(web_search.tool())
    recall_vectors = _recall_vectors(settings, base, db, runner.settings.prices)
    recall, recall_indexer = _recall(base, db, knowledge, tools, commands, recall_vectors)
    media = MediaService(settings.media, settings.data_dir, db, providers=providers, ledger=base.ledger,
                         spend=base.spend, retry=settings.agent.retry, spending=base.money.spending)
    media.register(DocumentReader(knowledge))  # long documents: the conversation's knowledge scope
    files_commands.register(commands, media.store)
    people_commands.register(commands, base.people)
    memory_talk = None
    if settings.memory.enabled:
        tools.register(base.facts.tool())
        memory_talk = memory_commands.register(commands, base.facts, writer, base.people,
                                               functools.partial(forget_accounts, db))
    door = Door(souls=base.souls, router=router, locks=base.locks, budget=base.budget, spend=base.spend,
                money=base.money, people=base.people, media=media, runner=runner, commands=commands,
                memory_talk=memory_talk, max_message_chars=settings.max_message_chars,
                meetings_enabled=settings.meetings.enabled, owner_seen=consent.seen, seats=room)
    return Parts(settings=settings, clock=clock, db=db, providers=providers, schedule=base.schedule, souls=base.souls,
                 rosters=rosters, prompts=base.prompts, transcripts=base.sessions.transcripts,
                 sessions=base.sessions, tools=tools, ledger=base.ledger, budget=base.budget, spend=base.spend,
                 money=base.money, locks=base.locks, router=router, runner=runner, room=room, decisions=decisions,
                 reminders=reminders, facts=base.facts, guardrails=guardrails, knowledge=knowledge,
                 web_search=web_search, media=media, people=base.people, memory_writer=writer,
                 consolidator=consolidator,
                 memory_talk=memory_talk, commands=commands, consent=consent, mcp=outside,
                 door=door, standing_meetings=standing_meetings, standing=standing, recall=recall,
                 recall_indexer=recall_indexer, recall_vectors=recall_vectors)

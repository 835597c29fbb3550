"""The board's parts, built complete in one place: the frozen :class:`Parts` record, and :class:`Observers`,
who is told of what happens inside it (the daemon's metrics), handed in before anything is built.

Consumers take the parts they use (``board.parts.room.store``, ``board.parts.ledger``), never the whole
board. A part that may be off is ``None`` where today's code asks (``knowledge``, ``web_search``, the
memory writer and memory talk).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from board.agent.guardrails import Guardrails
from board.agent.locks import SessionLocks
from board.agent.runner import AgentRunner
from board.agent.tools import ToolRegistry
from board.agent.turn import TurnObserver
from board.answer import Door, Money
from board.app.rosters import Rosters
from board.app.settings import BoardSettings
from board.clock import Clock
from board.commands.memory import MemoryTalk
from board.commands.registry import CommandRegistry
from board.conversation.sessions import Sessions
from board.conversation.transcripts import TranscriptStore
from board.llm.registry import ProviderRegistry
from board.media.service import MediaService
from board.memory.extract import MemoryWriter
from board.memory.facts import FactStore
from board.memory.knowledge.base import KnowledgeBase
from board.people import People
from board.recall.indexer import RecallIndexer
from board.recall.service import RecallService
from board.recall.vector_index import VectorIndexer
from board.room.convene import BoardRoom
from board.routing.router import Router
from board.schedule import Schedule
from board.schedule.standing import StandingWork
from board.spending.allowance import SpendGate
from board.spending.budget import Budget
from board.spending.ledger import Ledger, LLMCallRecord
from board.storage import Database
from board.tools.consent import OwnerConsent
from board.tools.mcp.servers import McpServers
from board.workspace.prompt import PromptBuilder
from board.workspace.souls import SoulStore

if TYPE_CHECKING:  # a meeting's modules load with the first meeting, web search's with its provider
    from board.agent.web_search import WebSearch
    from board.decisions.ratify import DecisionBook
    from board.decisions.reminders import Reminders
    from board.memory.consolidation.run import Consolidator
    from board.room.standing import StandingMeetings

__all__ = ["Observers", "Parts"]


@dataclass(frozen=True, kw_only=True)
class Observers:
    """Who is told of what happens inside the board: every provider call (before it is stored), every
    finished turn (the fields of its log line), every soul reload or load error ("reloaded" | "load_error", role)."""

    model_calls: tuple[Callable[[LLMCallRecord], None], ...] = ()
    turns: tuple[TurnObserver, ...] = ()
    souls: tuple[Callable[[str, str], None], ...] = ()


@dataclass(frozen=True, kw_only=True)
class Parts:
    """Every part of one board, each complete when it was made (:func:`board.app.build.build_parts`)."""

    settings: BoardSettings  # as built (a reload's changes are on Board.settings and the parts they touch)
    clock: Clock  # the one clock everything time-bound reads (board.clock)
    db: Database
    providers: ProviderRegistry
    schedule: Schedule  # reminders, reviews ...: rows claimed before they are sent
    souls: SoulStore
    rosters: Rosters
    prompts: PromptBuilder
    transcripts: TranscriptStore  # files or rows, by backend
    sessions: Sessions
    tools: ToolRegistry
    ledger: Ledger
    budget: Budget
    spend: SpendGate
    money: Money  # public terms and the spending context of a message
    locks: SessionLocks
    router: Callable[[], Router]  # a router over the roles available right now
    runner: AgentRunner
    room: BoardRoom
    decisions: DecisionBook
    reminders: Reminders  # action items' due dates and reminders (issue 27)
    facts: FactStore
    guardrails: Guardrails
    knowledge: KnowledgeBase | None  # None: off, or this SQLite lacks FTS5
    web_search: WebSearch | None  # None: no provider, the web_search tool is not offered
    media: MediaService  # voice notes, pictures and documents: fetched and read in the lane
    people: People  # one person across channels: linked accounts share memory and budgets
    memory_writer: MemoryWriter | None  # memory.auto_extract: facts heard after each turn
    consolidator: Consolidator | None  # memory.consolidation: a person's facts tidied on the schedule (issue 43)
    memory_talk: MemoryTalk | None
    commands: CommandRegistry
    consent: OwnerConsent  # the owner's Allow before a tool that changes the world runs (the MCP manager asks it)
    mcp: McpServers  # outside tools: the MCP servers of mcp.servers (started by the daemon, or on first use)
    door: Door  # what the front door (board.answer) uses of these
    standing_meetings: StandingMeetings  # standing items' meetings and roundtables, and what each item cost
    standing: StandingWork  # standing work (/every): briefs, meetings and roundtables on a rhythm (issue 42)
    recall: RecallService  # one search over what the asker may see, with citations (issue 43)
    recall_indexer: RecallIndexer  # copies what was said into recall's index, in the background (Board.watch)
    recall_vectors: VectorIndexer | None = None  # embeds passages for recall by meaning (memory.embedding_model)

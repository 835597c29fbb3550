"""What the board is built from: :class:`BoardSettings` (config as plain values; ``board`` never imports
``bot``), where its state lives by default (:data:`DB_FILE`), and every migration of its tables
(:data:`BOARD_MIGRATIONS`, in the owning packages' order)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from board.agent.guardrails import GuardrailSettings
from board.agent.migrations import MIGRATIONS as AGENT_MIGRATIONS
from board.agent.runner import AgentSettings
from board.conversation.migrations import MIGRATIONS as CONVERSATION_MIGRATIONS
from board.db import Migration
from board.decisions.migrations import MIGRATIONS as DECISION_MIGRATIONS
from board.decisions.predictions.migrations import MIGRATIONS as PREDICTION_MIGRATIONS
from board.decisions.recall.migrations import MIGRATIONS as RECALL_MIGRATIONS
from board.media.migrations import MIGRATIONS as MEDIA_MIGRATIONS
from board.media.settings import MediaSettings
from board.memory.facts import MemorySettings
from board.memory.knowledge.base import KnowledgeSettings
from board.memory.knowledge.migrations import MIGRATIONS as KNOWLEDGE_MIGRATIONS
from board.memory.migrations import MIGRATIONS as MEMORY_MIGRATIONS
from board.people import PeopleSettings
from board.people.migrations import MIGRATIONS as PEOPLE_MIGRATIONS
from board.recall.migrations import MIGRATIONS as RECALL_INDEX_MIGRATIONS
from board.roles import RosterSpec
from board.room.consult import ConsultSettings
from board.room.migrations import MIGRATIONS as ROOM_MIGRATIONS
from board.room.settings import MeetingSettings
from board.schedule.migrations import MIGRATIONS as SCHEDULE_MIGRATIONS
from board.schedule.standing import StandingSettings
from board.spending.budget import BudgetSettings
from board.spending.migrations import MIGRATIONS as SPENDING_MIGRATIONS
from board.storage import Dialect, StateURL
from board.tools.consent import ConsentSettings
from board.tools.consent.migrations import MIGRATIONS as CONSENT_MIGRATIONS
from board.tools.mcp.settings import McpSettings

if TYPE_CHECKING:  # web search's modules load with its provider
    from board.agent.web_search import WebSearchSettings
    from board.recall.embedder import EmbeddingSettings

__all__ = ["BOARD_MIGRATIONS", "DB_FILE", "BoardSettings"]

DB_FILE = "sabha.db"
BOARD_MIGRATIONS: tuple[Migration, ...] = (*CONVERSATION_MIGRATIONS, *SPENDING_MIGRATIONS, *MEMORY_MIGRATIONS,
                                           *ROOM_MIGRATIONS, *AGENT_MIGRATIONS, *MEDIA_MIGRATIONS,
                                           *PEOPLE_MIGRATIONS, *SCHEDULE_MIGRATIONS, *DECISION_MIGRATIONS,
                                           *PREDICTION_MIGRATIONS, *RECALL_MIGRATIONS, *KNOWLEDGE_MIGRATIONS,
                                           *CONSENT_MIGRATIONS, *RECALL_INDEX_MIGRATIONS)


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
    consent: ConsentSettings = field(default_factory=ConsentSettings)  # tools.consent_timeout_s
    mcp: McpSettings = field(default_factory=McpSettings)  # outside tools: the MCP servers and their limits
    timezone: str = "UTC"  # the owner's time zone: due dates are read and shown in it (IANA name)
    standing: StandingSettings = field(default_factory=StandingSettings)  # schedule.catch_up_s (issue 42)
    #: ``memory.embedding_*``: recall by meaning (issue 43); None: lexical recall only.
    recall_embedding: EmbeddingSettings | None = None
    #: Where the state lives (``state.url``); None: the SQLite file ``sabha.db`` in ``data_dir``.
    state: StateURL | None = None
    #: The most connections this process holds to a PostgreSQL state store.
    state_pool_size: int = 10

    def state_url(self) -> StateURL:
        """The configured state store, or the embedded SQLite file in ``data_dir``."""
        return self.state or StateURL(Dialect.SQLITE, path=self.data_dir / DB_FILE)

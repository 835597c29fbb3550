"""A plain config read without the config models: for ``sabha ask``.

Validating a config with pydantic costs ``sabha ask`` more than its whole turn (importing
pydantic and the config models, building the validator: ~0.13 s). Most boards' files set
only where the board is, its model and its roster (``sabha init`` writes exactly that), and
for those keys :mod:`bot.config.layout` already checks what the models check. So
:func:`read_plain` vouches for a file that sets nothing else:

* the top level holds only ``workspace``, ``data_dir``, ``llm`` and ``board``; ``llm`` only
  ``model``; ``board`` only ``enabled``, ``roster``, ``rosters`` and ``agents``;
* :func:`bot.config.layout.read_layout` vouches for those values (types, ranges, slugs, a
  known provider and roster), and no key names a secret.

Every other setting then has its default, which :class:`PlainConfig` holds with the same
attributes as :class:`bot.config.sections.Config` has for them. Anything else (another key, a value
it cannot vouch for, an unset variable) returns None: the caller validates the whole file,
which accepts it or stops with the usual words. ``tests/test_plain_config.py`` checks that
both readings give the board the same settings and that the defaults here are the models'.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from board.roles import RoleOverride
from bot.config.file import (
    DEFAULT_DATA_DIR,
    DEFAULT_MODEL,
    DEFAULT_ROSTER,
    DEFAULT_WORKSPACE,
    SECRET_KEY,
    read_data,
)
from bot.config.layout import layout_in, role_override
from bot.config.loaded import LoadedConfig

if TYPE_CHECKING:
    from board.agent.guardrails import GuardrailSettings
    from board.agent.web_search import WebSearchSettings
    from board.media.settings import MediaSettings
    from board.memory.facts import MemorySettings
    from board.memory.knowledge.base import KnowledgeSettings
    from board.people import PeopleSettings
    from board.tools.consent import ConsentSettings
    from board.tools.mcp import McpSettings
    from bot.config.sections import Config

__all__ = ["PLAIN_KEYS", "PlainConfig", "read_plain"]

#: What a file :func:`read_plain` vouches for may set, by section ("" is the top level).
PLAIN_KEYS: Mapping[str, frozenset[str]] = {
    "": frozenset({"workspace", "data_dir", "llm", "board"}),
    "llm": frozenset({"model"}),
    "board": frozenset({"enabled", "roster", "rosters", "agents"}),
}


@dataclass(frozen=True)
class _Retry:
    retries: int = 1
    backoff_s: float = 0.4
    backoff_max_s: float = 8.0
    retry_after_max_s: float = 20.0


@dataclass(frozen=True)
class _Provider:
    api_key: None = None
    base_url: str | None = None
    timeout_s: float | None = None
    stream: bool | None = None


@dataclass(frozen=True)
class _Providers:
    openai: _Provider = field(default_factory=_Provider)
    anthropic: _Provider = field(default_factory=_Provider)
    google: _Provider = field(default_factory=_Provider)


@dataclass(frozen=True)
class _Context:
    history_tokens: int = 3000
    keep_recent_messages: int = 6
    summary_max_tokens: int = 600
    compaction: bool = True
    roles: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class _LLM:
    model: str = DEFAULT_MODEL
    max_tokens: int = 1024
    fallbacks: list[str] = field(default_factory=list)
    cheap_model: str | None = None
    thinking: str = "off"
    keep_thinking: bool = False
    max_tool_iterations: int = 4
    timeout_s: float = 60.0
    turn_timeout_s: float = 300.0
    retry: _Retry = field(default_factory=_Retry)
    prices: dict[str, Any] = field(default_factory=dict)
    text_tool_protocol: list[str] = field(default_factory=list)
    providers: _Providers = field(default_factory=_Providers)
    context: _Context = field(default_factory=_Context)


@dataclass(frozen=True)
class _Meetings:
    enabled: bool = True
    max_turns_per_agent: int = 3
    max_duration_s: float = 600
    budget_usd: float = 1.0
    parallel: bool = True
    agent_timeout_s: float = 120
    quorum: float = 0.5
    critic_role: str = "critic"
    challengers: dict[str, str] = field(default_factory=dict)
    peer_review: bool = False
    min_resolved_predictions: int = 5
    recall_decisions: int = 3
    review_after_days: float = 0
    max_tool_calls: int = 12
    participants: list[str] = field(default_factory=list)
    max_extra_rounds: int = 2
    confirm_over_usd: float = 0.0
    resume_within_s: float = 3600


@dataclass(frozen=True)
class _Consultation:
    enabled: bool = True
    max_depth: int = 2
    timeout_s: float = 120
    allow: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class _Board:
    enabled: bool = True
    roster: str = DEFAULT_ROSTER
    rosters: dict[str, list[str]] = field(default_factory=dict)
    agents: dict[str, RoleOverride] = field(default_factory=dict)
    history_messages: int = 20
    max_message_chars: int = 20_000
    timezone: str = "UTC"
    meetings: _Meetings = field(default_factory=_Meetings)
    consultation: _Consultation = field(default_factory=_Consultation)


@dataclass(frozen=True)
class _Tools:
    default: list[str] | None = None
    consent_timeout_s: float = 120.0

    def consent(self) -> ConsentSettings:
        from board.tools.consent import ConsentSettings

        return ConsentSettings(timeout_s=self.consent_timeout_s)


@dataclass(frozen=True)
class _Budget:
    daily_usd: float | None = None
    per_sender_daily_usd: float | None = None


@dataclass(frozen=True)
class _Knowledge:
    enabled: bool = True
    folder: str = "knowledge"
    max_results: int = 5
    chunk_chars: int = 1200
    result_chars: int = 1000
    max_file_mb: float = 20

    def settings(self) -> KnowledgeSettings:
        from board.memory.knowledge.base import KnowledgeSettings

        return KnowledgeSettings(enabled=self.enabled, folder=self.folder, max_results=self.max_results,
                                 chunk_chars=self.chunk_chars, result_chars=self.result_chars,
                                 max_file_bytes=int(self.max_file_mb * 1024 * 1024))


@dataclass(frozen=True)
class _WebSearch:
    provider: None = None

    def settings(self) -> WebSearchSettings | None:
        return None  # no provider: the tool is not offered


@dataclass(frozen=True)
class _Memory:
    def settings(self) -> MemorySettings:
        from board.memory.facts import MemorySettings

        return MemorySettings()

    def embedding_settings(self) -> None:
        """No embedding model: recall by words only (``memory.embedding_model`` unset)."""
        return None


@dataclass(frozen=True)
class _Guardrails:
    def settings(self) -> GuardrailSettings:
        from board.agent.guardrails import GuardrailSettings

        return GuardrailSettings()


@dataclass(frozen=True)
class _Media:
    def settings(self) -> MediaSettings:
        from board.media.settings import MediaSettings

        return MediaSettings()


@dataclass(frozen=True)
class _People:
    def settings(self) -> PeopleSettings:
        from board.people import PeopleSettings

        return PeopleSettings()


@dataclass(frozen=True)
class _Mcp:
    def settings(self) -> McpSettings:
        from board.tools.mcp import McpSettings

        return McpSettings()


@dataclass(frozen=True)
class _State:
    url: str = ""  # the SQLite file in data_dir
    pool_size: int = 10


@dataclass(frozen=True)
class _Schedule:
    catch_up_s: float = 3600


@dataclass(frozen=True)
class _Replicas:
    lease_s: float = 15
    name: str = ""


@dataclass(frozen=True)
class PlainConfig:
    """The attributes of :class:`bot.config.sections.Config` that the board and ``ask`` read, with the
    defaults of everything :data:`PLAIN_KEYS` does not let the file set."""

    workspace: Path = Path(DEFAULT_WORKSPACE)
    data_dir: Path = Path(DEFAULT_DATA_DIR)
    llm: _LLM = field(default_factory=_LLM)
    board: _Board = field(default_factory=_Board)
    tools: _Tools = field(default_factory=_Tools)
    budget: _Budget = field(default_factory=_Budget)
    knowledge: _Knowledge = field(default_factory=_Knowledge)
    web_search: _WebSearch = field(default_factory=_WebSearch)
    memory: _Memory = field(default_factory=_Memory)
    guardrails: _Guardrails = field(default_factory=_Guardrails)
    media: _Media = field(default_factory=_Media)
    people: _People = field(default_factory=_People)
    state: _State = field(default_factory=_State)
    schedule: _Schedule = field(default_factory=_Schedule)
    replicas: _Replicas = field(default_factory=_Replicas)
    mcp: _Mcp = field(default_factory=_Mcp)

    def owner_chats(self) -> tuple[tuple[str, str], ...]:
        """No channel is configured in a plain file, so the config names no owner's chat."""
        return ()


def read_plain(explicit: str | Path | None = None, env: Mapping[str, str] | None = None,
               cwd: Path | None = None) -> tuple[LoadedConfig, dict[str, Any]] | None:
    """The config file's settings and its data (for its secrets) when this reading can vouch
    for it (see the module docstring), else None (no file found is None too). Raises
    :class:`bot.config.file.ConfigError` as :func:`bot.config.load.load_config` would for a
    missing file or one that is not YAML."""
    found = read_data(explicit, env, cwd)
    if found is None or not _plain(found.data):
        return None
    data = found.data
    layout = layout_in(data, found.path, found.found_by)
    if layout is None:
        return None
    board = data.get("board", {})
    config = PlainConfig(
        workspace=Path(data.get("workspace", DEFAULT_WORKSPACE)),
        data_dir=Path(data.get("data_dir", DEFAULT_DATA_DIR)),
        llm=_LLM(model=layout.model),
        board=_Board(enabled=not layout.roster.single, roster=layout.roster.name,
                     rosters=dict(board.get("rosters", {})),
                     agents={role: cast("RoleOverride", role_override(value))  # vouched for by layout_in
                             for role, value in board.get("agents", {}).items()}),
    )
    loaded = LoadedConfig(config=cast("Config", config), source=layout.source, base_dir=layout.base_dir,
                          found_by=layout.found_by)
    return loaded, data


def _plain(data: dict[str, Any]) -> bool:
    """Whether ``data`` sets only :data:`PLAIN_KEYS` and no key names a secret."""
    if not set(data) <= PLAIN_KEYS[""]:
        return False
    for name in ("llm", "board"):
        section = data.get(name, {})
        if not isinstance(section, dict) or not set(section) <= PLAIN_KEYS[name]:
            return False
    agents = data.get("board", {}).get("agents", {})
    if isinstance(agents, dict) and any(  # outside tools: the models check that each server is declared
            isinstance(a, dict) and any(str(t).startswith("mcp:") for t in (a.get("tools") or ()))
            for a in agents.values()):
        return False
    return not _names_a_secret(data)


def _names_a_secret(node: object) -> bool:
    if isinstance(node, dict):
        return any(SECRET_KEY.search(str(key)) or _names_a_secret(value) for key, value in node.items())
    if isinstance(node, list):
        return any(_names_a_secret(value) for value in node)
    return False

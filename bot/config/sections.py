"""The config's sections as pydantic models: :class:`Config` and everything inside it.

Apart from :mod:`bot.config.load` (which reads the file and validates it with :class:`Config`) so
that :mod:`bot.config.loaded` can name :class:`Config` in its types without importing the reading.
The defaults of the keys the fast paths read come from :mod:`bot.config.file`'s table.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from board.llm.base import Thinking
from board.roles import DEFAULT_ROSTERS, is_role_slug
from bot.channels.discord.config import DiscordSection
from bot.channels.slack.config import SlackSection
from bot.channels.telegram.config import TelegramSection
from bot.channels.whatsapp.config import WhatsAppSection
from bot.config.base import StrictModel, blank_is_unset, section
from bot.config.file import DEFAULT_DATA_DIR, DEFAULT_MODEL, DEFAULT_ROSTER, DEFAULT_WORKSPACE, check_model
from bot.config.knowledge import GuardrailsSection, KnowledgeSection, MemorySection, WebSearchSection
from bot.config.mcp import McpSection
from bot.config.media import MediaSection
from bot.config.people import PeopleSection
from bot.intake.config import InboxSection
from bot.mcp_server.config import McpEndpointSection
from bot.ops.config import TelemetrySection
from bot.web.config import WebSection

if TYPE_CHECKING:
    from board.tools.consent import ConsentSettings

__all__ = ["AgentOverrideConfig", "BoardSection", "BudgetSection", "Config", "ConsultationConfig", "ContextSection",
           "LLMSection", "LoggingSection", "MeetingsConfig", "PriceSection", "ProviderSection", "ProvidersSection",
           "RetrySection", "ServerSection", "ToolsSection"]


def _thinking_level(value: object) -> object:
    """A YAML ``off`` (read as false) is the level off; anything else is for the enum to check."""
    try:
        return value if value is None else Thinking.of(value)
    except ValueError:
        return value


class AgentOverrideConfig(StrictModel):
    """``board.agents.<role>``: per-role overrides of what the soul file says."""

    name: str | None = Field(None, min_length=1, max_length=64)
    emoji: str | None = Field(None, min_length=1, max_length=16)
    model: str | None = Field(None, min_length=1)
    soul_file: str | None = Field(None, min_length=1, description="relative to the workspace")
    tools: list[str] | None = None
    temperature: float | None = Field(None, ge=0, le=2, description="sampling temperature (soul front matter "
                                                                    "otherwise; unset: the provider's default)")
    thinking: Thinking | None = Field(None, description="off | low | medium | high: thinking before answering "
                                                        "(soul front matter otherwise; unset: llm.thinking)")
    telegram_token: SecretStr | None = Field(
        None, description="this role's own Telegram bot (from @BotFather; use ${ENV}): its meeting statements and "
                          "its answers in the forum are sent by that bot, with its own name and picture; add it to "
                          "the forum. The main bot still receives everything. Unset: the main bot, labelled")

    @field_validator("thinking", mode="before")
    @classmethod
    def _thinking(cls, value: object) -> object:
        return _thinking_level(value)


class MeetingsConfig(StrictModel):
    """``board.meetings``: limits of a board meeting."""

    enabled: bool = Field(True, description="false: no meetings (/meeting and asking for one get a one-line "
                                            "refusal, the chair cannot convene one)")
    max_turns_per_agent: int = Field(3, ge=1, le=10, description="rounds; each specialist speaks once per round")
    max_duration_s: float = Field(600, gt=0, le=86_400)
    budget_usd: float = Field(1.0, ge=0, description="checked before every model call of the meeting")
    parallel: bool = True
    agent_timeout_s: float = Field(120, gt=0, le=3600)
    quorum: float = Field(0.5, gt=0, le=1, description="share of specialists that must be present")
    critic_role: str = Field("critic", description="the challenger of rosters that `challengers` does not name")
    challengers: dict[str, str] = Field(
        default_factory=dict, description="roster -> the role that reviews its draft decisions "
                                          "(defaults: board -> critic, sabha -> investor)")
    peer_review: bool = Field(False, description="after round 1 each member ranks the others' anonymised "
                                                 "statements; the ranking goes to the chair and the minutes")
    min_resolved_predictions: int = Field(5, ge=1, le=1000, description="resolved predictions an advisor needs "
                                                                        "before /stats gives it a Brier score")
    recall_decisions: int = Field(3, ge=0, le=10, description="earlier decisions on related topics put in a "
                                                              "new meeting's framing (0: none)")
    review_after_days: float = Field(0, ge=0, le=3650, description="convene a short review of each decision this "
                                                                   "many days after it (0: off; /review <id> "
                                                                   "<when> schedules one)")
    max_tool_calls: int = Field(12, ge=0, le=1000, description="outside (MCP) tool calls the members of one "
                                                               "meeting may make, all together; past it a call is "
                                                               "refused and the model told to answer with what it "
                                                               "has (0: none)")
    participants: list[str] = Field(default_factory=list, description=(
        "beyond the owner, who may write into a running meeting and steer it (/wrap, /pause, /resume, /extend, "
        "/cancel): a sender id (a Telegram user id), <channel>:<id> (telegram:43), a linked person (person:2) or a "
        "phone number (+15550002222); anyone else's messages in a meeting's thread are not contributions"))
    max_extra_rounds: int = Field(2, ge=0, le=10, description="rounds /extend may add to one meeting")
    confirm_over_usd: float = Field(0.0, ge=0, description=(
        "a meeting expected to cost more than this waits for the owner's Start button (0: never waits)"))
    resume_within_s: float = Field(3600, ge=0, le=7 * 86_400, description=(
        "a meeting that was running when Sabha stopped resumes at the next start if it began less than this "
        "long ago; an older one ends as interrupted and says so where it was held"))


class ConsultationConfig(StrictModel):
    """``board.consultation``: agents asking each other."""

    enabled: bool = True
    max_depth: int = Field(2, ge=0, le=5)
    timeout_s: float = Field(120, gt=0, le=3600)
    allow: dict[str, list[str]] = Field(default_factory=dict, description="role -> roles it may consult")


class BoardSection(StrictModel):
    """``board``: the roster and its agents."""

    enabled: bool = Field(True, description="false: the seed's single-agent setup: the chair alone (SOUL.md), "
                                            "no role topics, no role addressing, no meetings or consultations")
    roster: str = DEFAULT_ROSTER
    rosters: dict[str, list[str]] = Field(default_factory=dict)
    agents: dict[str, AgentOverrideConfig] = Field(default_factory=dict)
    history_messages: int = Field(20, ge=0, le=150, description="bounded by the 400-entry transcript tail")
    max_message_chars: int = Field(20_000, ge=100, le=1_000_000)
    slow_notice_s: float = Field(8.0, ge=0, le=3600, description=(
        "a turn still running after this long tells the user once that the board is working on it "
        "(on Telegram the notice becomes the answer); 0 = never"))
    timezone: str = Field("UTC", description=(
        "the owner's time zone (IANA name, e.g. Europe/Berlin): due dates such as \"friday\" or \"17:00\" "
        "are read and shown in it"))
    meetings: MeetingsConfig = section()
    consultation: ConsultationConfig = section()

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(value.strip())
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"{value!r} is not a time zone this system knows; use an IANA name such as UTC, "
                             "Europe/Berlin or America/New_York") from exc
        return value.strip()

    @field_validator("agents")
    @classmethod
    def _role_keys(cls, value: dict[str, AgentOverrideConfig]) -> dict[str, AgentOverrideConfig]:
        for role in value:
            if not is_role_slug(role):
                raise ValueError(f"{role!r} is not a role slug (lowercase letters, digits, - or _)")
        return value

    @field_validator("rosters")
    @classmethod
    def _roster_members(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for name, members in value.items():
            if not is_role_slug(name):
                raise ValueError(f"roster name {name!r} must be a slug (lowercase letters, digits, - or _)")
            bad = [m for m in members if not is_role_slug(m)]
            if bad:
                raise ValueError(f"roster {name!r} has invalid role slugs: {', '.join(map(repr, bad))}")
        return value

    @model_validator(mode="after")
    def _known_roster(self) -> BoardSection:
        known = set(DEFAULT_ROSTERS) | set(self.rosters)
        if self.roster not in known:
            raise ValueError(f"roster {self.roster!r} is unknown; use one of {', '.join(sorted(known))} "
                             "or define it under board.rosters")
        return self


class RetrySection(StrictModel):
    """``llm.retry``: what happens when a model call fails with a timeout, 429, 5xx or connection error."""

    retries: int = Field(1, ge=0, le=5, description="retries of the same model before the next fallback")
    backoff_s: float = Field(0.4, ge=0, le=60, description="first backoff; doubles per retry, +-50% jitter")
    backoff_max_s: float = Field(8.0, ge=0, le=300)
    retry_after_max_s: float = Field(20.0, ge=0, le=600, description="longer retry-after hints skip to the fallback")


class PriceSection(StrictModel):
    """``llm.prices.<provider:model>``: USD per million tokens (cache prices default to the input price)."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(None, ge=0)
    cache_write: float | None = Field(None, ge=0)


class ProviderSection(StrictModel):
    """``llm.providers.<name>``: how to reach one provider."""

    api_key: SecretStr | None = Field(
        None, description="default: $OPENAI_API_KEY / $ANTHROPIC_API_KEY / $GOOGLE_API_KEY (or $GEMINI_API_KEY)"
    )
    base_url: str | None = Field(None, description="e.g. http://localhost:11434/v1 for Ollama")
    timeout_s: float | None = Field(None, gt=0, le=3600, description="HTTP timeout; default llm.timeout_s")
    stream: bool | None = Field(None, description="unset (default): answers stream where the channel shows them "
                                                  "as they are written (Telegram edits, the web chat, the terminal); "
                                                  "true: every call streams (time to first token recorded); "
                                                  "false: answers arrive whole")

    _blank_is_unset = blank_is_unset("api_key", "base_url")


class ProvidersSection(StrictModel):
    """``llm.providers``: the OpenAI(-compatible), Anthropic and Google Gemini endpoints."""

    openai: ProviderSection = section()
    anthropic: ProviderSection = section()
    google: ProviderSection = section()


class ContextSection(StrictModel):
    """``llm.context``: the history's token budget and compaction."""

    history_tokens: int = Field(3000, ge=100, le=1_000_000, description="budget of summary + earlier messages")
    keep_recent_messages: int = Field(6, ge=1, le=200, description="messages kept verbatim when compacting")
    summary_max_tokens: int = Field(600, ge=50, le=8000)
    compaction: bool = Field(True, description="false: drop the oldest messages instead of summarising")
    roles: dict[str, int] = Field(default_factory=dict, description="per-role history_tokens")


class LLMSection(StrictModel):
    """``llm``: which models answer, how failures are handled and what calls cost."""

    model: str = Field(DEFAULT_MODEL, min_length=1, description="provider:model, or offline")
    max_tokens: int = Field(1024, ge=16, le=200_000)
    fallbacks: list[str] = Field(default_factory=list, description="models tried in order when the model fails")
    cheap_model: str | None = Field(None, description="compaction summaries; default: the role's model")
    thinking: Thinking = Field(Thinking.OFF, description="off | low | medium | high: how much every role thinks "
                                                         "before answering (a role's own thinking: wins)")
    keep_thinking: bool = Field(False, description="write the model's thinking into the transcript (never shown)")
    max_tool_iterations: int = Field(4, ge=0, le=20)
    timeout_s: float = Field(60.0, gt=0, le=3600, description="deadline of one model call")
    turn_timeout_s: float = Field(300.0, gt=0, le=7200, description="deadline of a whole turn")
    retry: RetrySection = section()
    prices: dict[str, PriceSection] = Field(default_factory=dict)
    text_tool_protocol: list[str] = Field(
        default_factory=list, description="models (glob patterns) that call tools as [TOOL: name ARG: {json}]"
    )
    providers: ProvidersSection = section()
    context: ContextSection = section()

    @field_validator("model", "cheap_model")
    @classmethod
    def _model(cls, value: str | None) -> str | None:
        return check_model(value) if value is not None else None

    @field_validator("thinking", mode="before")
    @classmethod
    def _thinking(cls, value: object) -> object:
        return _thinking_level(value)

    @field_validator("fallbacks")
    @classmethod
    def _fallbacks(cls, value: list[str]) -> list[str]:
        return [check_model(v) for v in value]


class ToolsSection(StrictModel):
    """``tools``: which tools a role may call when its soul and board.agents.<role>.tools say nothing."""

    default: list[str] | None = Field(None, description="None: every registered tool; []: none")
    consent_timeout_s: float = Field(120.0, gt=0, le=3600, description=(
        "how long an advisor waits for the owner's Allow before a tool that changes the world (one an MCP server "
        "does not mark read-only) runs; then it answers without the call and says so"))

    def consent(self) -> ConsentSettings:
        """The consent gate's settings."""
        from board.tools.consent import ConsentSettings

        return ConsentSettings(timeout_s=self.consent_timeout_s)


class LoggingSection(StrictModel):
    """``logging``: how chatty the daemon is."""

    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    format: Literal["text", "json", "auto"] = Field("auto", description=(
        "text: human lines; json: one JSON object per line; auto: JSON when run by systemd "
        "($INVOCATION_ID or $JOURNAL_STREAM set), text otherwise"))


class ServerSection(StrictModel):
    """``server``: the daemon's HTTP server (health check, webhooks)."""

    host: str = Field("127.0.0.1", min_length=1, description="0.0.0.0 to listen on every interface")
    port: int = Field(8080, ge=0, le=65535, description="0 picks a free port")
    body_timeout_s: float = Field(10, gt=0, le=300, description=(
        "a request's body must arrive in full within this many seconds of its headers; a slower client is "
        "answered 408 and disconnected (Telegram's and Meta's webhooks send theirs at once)"))
    max_pending_bodies: int = Field(64, ge=1, le=10_000, description=(
        "request bodies being received at once (a webhook's body is read before its signature can be checked); "
        "past this the one arriving longest is answered 503 and disconnected"))
    idle_timeout_s: float = Field(75, gt=0, le=3600, description=(
        "a connection that sends no complete request for this long is closed: idle keep-alive connections, "
        "and clients sending their headers too slowly"))
    front_desk_port: int | None = Field(None, ge=0, le=65535, description=(
        "a second port (on server.host) where the channels' webhooks (Slack events, WhatsApp, Telegram in webhook "
        "mode) are received on a thread of their own: stored, answered 200, then handed to the board, so their "
        "acknowledgement does not wait for the board's answers; point the services' webhook URLs at it. "
        "null: off (webhooks on server.port); 0 picks a free port"))
    mcp: McpEndpointSection = section()



class BudgetSection(StrictModel):
    """``budget``: daily limits on model spend (UTC days, estimated from llm.prices); unset = no limit."""

    daily_usd: float | None = Field(None, ge=0, description=(
        "all model calls together; once reached, every message gets a polite fixed reply and no model call"))
    per_sender_daily_usd: float | None = Field(None, ge=0, description=(
        "one sender's model calls (the owner is held only to daily_usd)"))


class StateSection(StrictModel):
    """``state``: where Sabha keeps its state (messages, sessions, transcripts, meetings, ledger ...)."""

    url: str = Field("", description=(
        "empty: the SQLite file sabha.db in data_dir (one process); sqlite:///path/to/file.db; or "
        "postgresql://user@host:5432/dbname for several `sabha run` replicas on one PostgreSQL (the password comes "
        "from $SABHA_DB_PASSWORD or $PGPASSWORD, never from this file)"))
    pool_size: int = Field(10, ge=1, le=200, description=(
        "PostgreSQL: the pooled connections one replica's work shares (lease renewal, LISTEN and the polling lock "
        "have one of their own each)"))
    schedule_recheck_s: float = Field(30, ge=1, le=3600, description=(
        "scheduled work (reminders, reviews): the runner looks at its table at least this often; a change made by "
        "`sabha actions due` (or another replica) wakes it at once, so this only bounds a wake-up that was lost"))

    @field_validator("url")
    @classmethod
    def _url_parses(cls, value: str) -> str:
        from board.storage.url import parse_state_url

        parse_state_url(value, data_dir=Path("."), env={})  # a ValueError says what to write instead
        return value.strip()


class ScheduleSection(StrictModel):
    """``schedule``: standing work (``/every monday 9am brief``, ``sabha schedule``): when a run missed while Sabha
    was down still happens."""

    catch_up_s: float = Field(3600, ge=0, le=7 * 86_400, description=(
        "a standing item's run missed while Sabha was not running is done once on start if it is at most this many "
        "seconds late; later than that it is not done, and one line in its place says it was missed and when the "
        "next run is"))


class ReplicasSection(StrictModel):
    """``replicas``: several ``sabha run`` processes on one PostgreSQL (state.url), any of them taking any delivery."""

    lease_s: float = Field(15, ge=1, le=600, description=(
        "a conversation is worked by one replica at a time, under a lease it renews every lease_s/3; when a replica "
        "dies its leases expire after this long and another replica answers what it left"))
    name: str = Field("", max_length=100, description=(
        "this replica's name in `sabha status` and the logs; empty: host name and process id"))


class Config(StrictModel):
    """The whole config file."""

    workspace: Path = Path(DEFAULT_WORKSPACE)
    data_dir: Path = Path(DEFAULT_DATA_DIR)
    llm: LLMSection = section()
    board: BoardSection = section()
    tools: ToolsSection = section()
    logging: LoggingSection = section()
    server: ServerSection = section()
    inbox: InboxSection = section()
    budget: BudgetSection = section()
    telegram: TelegramSection = section()
    whatsapp: WhatsAppSection = section()
    slack: SlackSection = section()
    discord: DiscordSection = section()
    knowledge: KnowledgeSection = section()
    web_search: WebSearchSection = section()
    memory: MemorySection = section()
    guardrails: GuardrailsSection = section()
    media: MediaSection = section()
    people: PeopleSection = section()
    web: WebSection = section()
    state: StateSection = section()
    schedule: ScheduleSection = section()
    replicas: ReplicasSection = section()
    mcp: McpSection = section()
    telemetry: TelemetrySection = section()

    def owner_chats(self) -> tuple[tuple[str, str], ...]:
        """(channel, chat id) of the owner's own chat on each running channel, as the config names the owner:
        Telegram's first allowed user id (a private chat's id is the user's), WhatsApp's first allowed number, Slack's
        first allowed user id (a post to a user id goes to the app's DM with them), Discord's first allowed user's
        DM (``dm-<user id>``)."""
        chats: list[tuple[str, str]] = []
        if self.telegram.enabled and self.telegram.allowed_user_ids:
            chats.append(("telegram", str(self.telegram.allowed_user_ids[0])))
        if self.whatsapp.enabled and self.whatsapp.allowed_numbers:
            chats.append(("whatsapp", self.whatsapp.allowed_numbers[0]))
        if self.slack.enabled and self.slack.allowed_user_ids:
            chats.append(("slack", self.slack.allowed_user_ids[0]))
        if self.discord.enabled and self.discord.owner is not None:
            chats.append(("discord", f"dm-{self.discord.owner}"))  # the owner's DM (bot.channels.discord.config)
        return tuple(chats)

    @model_validator(mode="after")
    def _known_mcp_servers(self) -> Config:
        declared = set(self.mcp.servers)
        for role, override in self.board.agents.items():
            for i, entry in enumerate(override.tools or ()):
                if not entry.startswith("mcp:"):
                    continue
                name = entry[4:].partition(".")[0]
                if name not in declared:
                    raise ValueError(
                        f"board.agents.{role}.tools.{i}: {entry!r} names no server of mcp.servers "
                        f"(declared: {', '.join(sorted(declared)) or 'none'}); declare it under mcp.servers")
        return self

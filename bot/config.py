"""Configuration: which sabha.yaml, YAML validated by pydantic, secrets from the environment.

Which file, first found wins (like git finds its repository): ``--config PATH`` (a file,
or a folder holding ``sabha.yaml``), ``$SABHA_CONFIG`` (the same), the nearest
``sabha.yaml`` in the current folder or any folder above it, the personal board
(``$XDG_DATA_HOME/sabha/sabha.yaml``, default ``~/.local/share/sabha``), else none: the
built-in defaults (:func:`locate_config` says which and how it was found). Strings may
use ``${VAR}`` or ``${VAR:-default}`` (``$${`` is a literal ``${``). Relative paths are
relative to the config file's folder. Every error names the file, the key path and what
is wrong; unknown keys are errors, so typos surface. A secret written into the file
itself is accepted with a warning (:attr:`LoadedConfig.warnings`). An unset variable in
a channel's section (``telegram``, ``whatsapp``) stops only what needs the channels:
loaded with ``channels=False`` (``sabha ask``, ``chat``, ``souls`` ...) that section is
skipped and said so in :attr:`LoadedConfig.skipped`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from board.roles import DEFAULT_ROSTERS, GENERAL, is_role_slug
from bot.channels.telegram.config import TelegramSection
from bot.channels.whatsapp.config import WhatsAppSection
from bot.config_file import (
    CONFIG_ENV,
    DEFAULT_CONFIG_NAME,
    KNOWN_PROVIDERS,
    PROVIDER_KEY_ENV,
    ConfigError,
    ConfigLocation,
    FoundBy,
    check_model,
    dotted_path,
    find_config,
    interpolate,
    locate_config,
    parse_yaml,
    personal_board_dir,
    read_text,
)
from bot.config_model import StrictModel, blank_is_unset, section
from bot.intake.config import InboxSection
from bot.knowledge_config import GuardrailsSection, KnowledgeSection, MemorySection, WebSearchSection
from bot.pydantic_plugins import skip_plugin_discovery_when_none

if TYPE_CHECKING:  # the board's settings types are imported when they are built: `sabha souls` needs none
    from board.agent.runner import AgentSettings
    from board.budget import BudgetSettings
    from board.roles import RosterSpec
    from board.service import BoardSettings

_SECRET_KEYS = re.compile(r"(token|secret|api_key|password|app_secret)$", re.IGNORECASE)


class AgentOverrideConfig(StrictModel):
    """``board.agents.<role>``: per-role overrides of what the soul file says."""

    name: str | None = Field(None, min_length=1, max_length=64)
    emoji: str | None = Field(None, min_length=1, max_length=16)
    model: str | None = Field(None, min_length=1)
    soul_file: str | None = Field(None, min_length=1, description="relative to the workspace")
    tools: list[str] | None = None
    temperature: float | None = Field(None, ge=0, le=2, description="sampling temperature (soul front matter "
                                                                    "otherwise; unset: the provider's default)")


class MeetingsConfig(StrictModel):
    """``board.meetings``: limits of a board meeting."""

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


class ConsultationConfig(StrictModel):
    """``board.consultation``: agents asking each other."""

    enabled: bool = True
    max_depth: int = Field(2, ge=0, le=5)
    timeout_s: float = Field(120, gt=0, le=3600)
    allow: dict[str, list[str]] = Field(default_factory=dict, description="role -> roles it may consult")


class BoardSection(StrictModel):
    """``board``: the roster and its agents."""

    roster: str = "board"
    rosters: dict[str, list[str]] = Field(default_factory=dict)
    agents: dict[str, AgentOverrideConfig] = Field(default_factory=dict)
    history_messages: int = Field(20, ge=0, le=150, description="bounded by the 400-entry transcript tail")
    max_message_chars: int = Field(20_000, ge=100, le=1_000_000)
    meetings: MeetingsConfig = section()
    consultation: ConsultationConfig = section()

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

    api_key: SecretStr | None = Field(None, description="default: $OPENAI_API_KEY / $ANTHROPIC_API_KEY")
    base_url: str | None = Field(None, description="e.g. http://localhost:11434/v1 for Ollama")
    timeout_s: float | None = Field(None, gt=0, le=3600, description="HTTP timeout; default llm.timeout_s")
    stream: bool = Field(False, description="stream answers (records time to first token)")

    _blank_is_unset = blank_is_unset("api_key", "base_url")


class ProvidersSection(StrictModel):
    """``llm.providers``: the OpenAI(-compatible) and Anthropic endpoints."""

    openai: ProviderSection = section()
    anthropic: ProviderSection = section()


class ContextSection(StrictModel):
    """``llm.context``: the history's token budget and compaction."""

    history_tokens: int = Field(3000, ge=100, le=1_000_000, description="budget of summary + earlier messages")
    keep_recent_messages: int = Field(6, ge=1, le=200, description="messages kept verbatim when compacting")
    summary_max_tokens: int = Field(600, ge=50, le=8000)
    compaction: bool = Field(True, description="false: drop the oldest messages instead of summarising")
    roles: dict[str, int] = Field(default_factory=dict, description="per-role history_tokens")


class LLMSection(StrictModel):
    """``llm``: which models answer, how failures are handled and what calls cost."""

    model: str = Field("offline", min_length=1, description="provider:model, or offline")
    max_tokens: int = Field(1024, ge=16, le=200_000)
    fallbacks: list[str] = Field(default_factory=list, description="models tried in order when the model fails")
    cheap_model: str | None = Field(None, description="compaction summaries; default: the role's model")
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

    @field_validator("fallbacks")
    @classmethod
    def _fallbacks(cls, value: list[str]) -> list[str]:
        return [check_model(v) for v in value]


class ToolsSection(StrictModel):
    """``tools``: which tools a role may call when its soul and board.agents.<role>.tools say nothing."""

    default: list[str] | None = Field(None, description="None: every registered tool; []: none")


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



class BudgetSection(StrictModel):
    """``budget``: daily limits on model spend (UTC days, estimated from llm.prices); unset = no limit."""

    daily_usd: float | None = Field(None, ge=0, description=(
        "all model calls together; once reached, every message gets a polite fixed reply and no model call"))
    per_sender_daily_usd: float | None = Field(None, ge=0, description=(
        "one sender's model calls (the owner is held only to daily_usd)"))


class Config(StrictModel):
    """The whole config file."""

    workspace: Path = Path("workspace")
    data_dir: Path = Path("sessions")
    llm: LLMSection = section()
    board: BoardSection = section()
    tools: ToolsSection = section()
    logging: LoggingSection = section()
    server: ServerSection = section()
    inbox: InboxSection = section()
    budget: BudgetSection = section()
    telegram: TelegramSection = section()
    whatsapp: WhatsAppSection = section()
    knowledge: KnowledgeSection = section()
    web_search: WebSearchSection = section()
    memory: MemorySection = section()
    guardrails: GuardrailsSection = section()


@dataclass(frozen=True)
class LoadedConfig:
    """A validated config, where it came from, and its folder for relative paths."""

    config: Config
    source: Path | None
    base_dir: Path
    found_by: FoundBy = FoundBy.NONE
    warnings: tuple[str, ...] = ()  # e.g. a secret written into the file
    skipped: tuple[str, ...] = ()  # channel sections left out (loaded with channels=False)

    @property
    def workspace(self) -> Path:
        """The workspace folder, absolute."""
        return (self.base_dir / self.config.workspace).resolve()

    @property
    def data_dir(self) -> Path:
        """The data folder (transcripts, state db), absolute."""
        return (self.base_dir / self.config.data_dir).resolve()

    def models(self) -> list[str]:
        """Every model the config names, once each: the default, the fallbacks, the cheap
        model, the per-role ones (``board.agents``)."""
        llm = self.config.llm
        models = [llm.model, *llm.fallbacks, *([llm.cheap_model] if llm.cheap_model else [])]
        models += [a.model for a in self.config.board.agents.values() if a.model]
        return list(dict.fromkeys(models))

    def roster(self) -> RosterSpec:
        """The roster in use with its per-role overrides (without building the rest of the board's settings)."""
        from board.roles import RoleOverride, RosterSpec

        board = self.config.board
        overrides = {
            role: RoleOverride(name=o.name, emoji=o.emoji, model=o.model, soul_file=o.soul_file,
                               tools=tuple(o.tools) if o.tools is not None else None, temperature=o.temperature)
            for role, o in board.agents.items()
        }
        return RosterSpec.build(board.roster, custom=board.rosters, overrides=overrides)

    def board_settings(self) -> BoardSettings:
        """The plain values the board needs."""
        from board.room.consult import ConsultSettings
        from board.room.settings import DEFAULT_CHALLENGERS, MeetingSettings
        from board.service import BoardSettings

        board = self.config.board
        roster = self.roster()
        meetings, consult = board.meetings, board.consultation
        return BoardSettings(
            workspace=self.workspace,
            data_dir=self.data_dir,
            roster=roster,
            agent=self.agent_settings(),
            meetings=MeetingSettings(
                max_turns_per_agent=meetings.max_turns_per_agent,
                max_duration_s=meetings.max_duration_s,
                budget_usd=meetings.budget_usd,
                parallel=meetings.parallel,
                agent_timeout_s=meetings.agent_timeout_s,
                quorum=meetings.quorum,
                critic_role=meetings.critic_role,
                challengers=tuple({**dict(DEFAULT_CHALLENGERS), **meetings.challengers}.items()),
                peer_review=meetings.peer_review,
            ),
            consultation=ConsultSettings(
                enabled=consult.enabled,
                max_depth=consult.max_depth,
                timeout_s=consult.timeout_s,
                allow={role: tuple(targets) for role, targets in consult.allow.items()},
            ),
            custom_rosters=tuple((name, tuple(roles)) for name, roles in board.rosters.items()),
            max_message_chars=board.max_message_chars,
            budget=self.budget_settings(),
            knowledge=self.config.knowledge.settings(),
            web_search=self.config.web_search.settings(),
            memory=self.config.memory.settings(),
            guardrails=self.config.guardrails.settings(),
        )

    def budget_settings(self) -> BudgetSettings:
        """``budget:`` as the board's plain settings."""
        from board.budget import BudgetSettings

        return BudgetSettings(daily_usd=self.config.budget.daily_usd,
                              per_sender_daily_usd=self.config.budget.per_sender_daily_usd)

    def agent_settings(self) -> AgentSettings:
        """The ``llm`` section (and history/tool defaults) as the board's plain settings."""
        from board.agent.compaction import ContextSettings
        from board.agent.runner import AgentSettings
        from board.llm.pricing import ModelPrice, PriceTable
        from board.llm.resilience import RetryPolicy

        llm = self.config.llm
        prices = {
            model: ModelPrice(
                input=p.input,
                output=p.output,
                cache_read=p.input if p.cache_read is None else p.cache_read,
                cache_write=p.input if p.cache_write is None else p.cache_write,
            )
            for model, p in llm.prices.items()
        }
        context = llm.context
        return AgentSettings(
            default_model=llm.model,
            history_messages=self.config.board.history_messages,
            max_tokens=llm.max_tokens,
            fallbacks=tuple(llm.fallbacks),
            cheap_model=llm.cheap_model,
            max_tool_iterations=llm.max_tool_iterations,
            default_tools=tuple(self.config.tools.default) if self.config.tools.default is not None else None,
            text_tool_models=tuple(llm.text_tool_protocol),
            retry=RetryPolicy(
                timeout_s=llm.timeout_s,
                retries=llm.retry.retries,
                backoff_s=llm.retry.backoff_s,
                backoff_max_s=llm.retry.backoff_max_s,
                retry_after_max_s=llm.retry.retry_after_max_s,
            ),
            turn_timeout_s=llm.turn_timeout_s,
            prices=PriceTable.with_overrides(prices),
            context=ContextSettings(
                history_tokens=context.history_tokens,
                keep_recent_messages=context.keep_recent_messages,
                summary_max_tokens=context.summary_max_tokens,
                compaction=context.compaction,
                roles=dict(context.roles),
            ),
        )


#: The variable to suggest for a secret written into the file, by key path.
SECRET_ENV = {
    "telegram.token": "TELEGRAM_BOT_TOKEN",
    "telegram.webhook_secret": "TELEGRAM_WEBHOOK_SECRET",
    "whatsapp.access_token": "WHATSAPP_ACCESS_TOKEN",
    "whatsapp.app_secret": "WHATSAPP_APP_SECRET",
    "whatsapp.verify_token": "WHATSAPP_VERIFY_TOKEN",
    **{f"llm.providers.{name}.api_key": env for name, env in PROVIDER_KEY_ENV.items()},
}


def literal_secrets(raw: Any, source: str, path: tuple[str, ...] = ()) -> list[str]:
    """A warning per secret written into the file itself instead of read from ``${VAR}``."""
    found: list[str] = []
    if isinstance(raw, dict):
        for key, value in raw.items():
            found += literal_secrets(value, source, (*path, str(key)))
    elif isinstance(raw, str) and raw.strip() and "${" not in raw and path and _SECRET_KEYS.search(path[-1]):
        dotted = dotted_path(path)
        var = SECRET_ENV.get(dotted) or "_".join(p.upper() for p in path)
        found.append(f"{dotted} is written into {source} itself: a secret belongs in the environment. "
                     f"Write {dotted.rsplit('.', 1)[-1]}: ${{{var}}} and export {var}")
    return found


def _format_validation(exc: ValidationError) -> list[str]:
    lines = []
    for err in exc.errors():
        loc = dotted_path(tuple(p for p in err["loc"]))
        if err["type"] == "extra_forbidden":
            lines.append(f"{loc}: unknown key (check the spelling; config.example.yaml lists every option)")
        else:
            msg = err["msg"].removeprefix("Value error, ")
            given = err.get("input")
            shown = "" if isinstance(given, (dict, list)) or given is None else f" (got {given!r})"
            lines.append(f"{loc}: {msg}{shown}")
    return lines


def channel_sections() -> tuple[str, ...]:
    """The config sections that only the channels read (``telegram``, ``whatsapp``): those whose
    model lives in a channel's package."""
    return tuple(name for name, field in Config.model_fields.items()
                 if getattr(field.annotation, "__module__", "").startswith("bot.channels."))


@dataclass(frozen=True)
class ParsedConfig:
    """A validated config plus what was said about it (warnings, channel sections skipped)."""

    config: Config
    warnings: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()


def read_config(text: str, *, source: str, env: Mapping[str, str] | None = None,
                channels: bool = True) -> ParsedConfig:
    """Parse and validate config text; raises ConfigError naming ``source``.

    With ``channels=False`` a channel section that names an unset variable is skipped (and
    said so in ``skipped``) instead of failing: commands that never start a channel work.
    """
    env = os.environ if env is None else env
    raw = parse_yaml(text, source)
    data, problems = interpolate(raw, env)
    skipped: list[str] = []
    if problems and not channels:
        sections = channel_sections()
        for section in sorted({p.path[0] for p in problems if p.path and p.path[0] in sections}):
            reasons = "; ".join(p.text for p in problems if p.path[:1] == (section,))
            skipped.append(f"{section} skipped (only `sabha run` needs it): {reasons}")
            data.pop(section, None)
        problems = [p for p in problems if not (p.path and p.path[0] in sections)]
    if problems:
        raise ConfigError(f"config {source}:\n  " + "\n  ".join(p.text for p in problems))
    skip_plugin_discovery_when_none()  # before the first validator pydantic builds
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"config {source}:\n  " + "\n  ".join(_format_validation(exc))) from exc
    return ParsedConfig(config, tuple(literal_secrets(raw, source)), tuple(skipped))


def parse_config(text: str, *, source: str, env: Mapping[str, str] | None = None) -> Config:
    """Parse and validate config text (every section); raises ConfigError naming ``source``."""
    return read_config(text, source=source, env=env).config


def load_config(explicit: str | Path | None = None, env: Mapping[str, str] | None = None, *,
                channels: bool = True, cwd: Path | None = None) -> LoadedConfig:
    """Find, read and validate the config; see the module docstring."""
    where = locate_config(explicit, env, cwd)
    path = where.path
    if path is None:
        defaults = parse_config("", source="(built-in defaults)", env=env)
        return LoadedConfig(config=defaults, source=None, base_dir=where.searched_from, found_by=where.found_by)
    parsed = read_config(read_text(path), source=str(path), env=env, channels=channels)
    return LoadedConfig(config=parsed.config, source=path.resolve(), base_dir=path.resolve().parent,
                        found_by=where.found_by, warnings=parsed.warnings, skipped=parsed.skipped)


def masked_dump(config: Config) -> dict[str, Any]:
    """The effective config as plain data with every secret replaced by ``***``."""

    def mask(node: Any, key: str = "") -> Any:
        if isinstance(node, dict):
            return {k: mask(v, str(k)) for k, v in node.items()}
        if isinstance(node, list):
            return [mask(v, key) for v in node]
        if isinstance(node, SecretStr):
            return "***" if node.get_secret_value() else ""
        if isinstance(node, str) and node and _SECRET_KEYS.search(key):
            return "***"
        if isinstance(node, str) and "://" in node and "@" in node.split("://", 1)[1].split("/", 1)[0]:
            scheme, rest = node.split("://", 1)
            return f"{scheme}://***@{rest.split('@', 1)[1]}"  # credentials inside a URL
        if isinstance(node, Path):
            return str(node)
        return node

    return {k: mask(v, k) for k, v in config.model_dump(mode="python").items()}


__all__ = [
    "CONFIG_ENV",
    "DEFAULT_CONFIG_NAME",
    "GENERAL",
    "KNOWN_PROVIDERS",
    "PROVIDER_KEY_ENV",
    "Config",
    "ConfigError",
    "ConfigLocation",
    "FoundBy",
    "LoadedConfig",
    "ParsedConfig",
    "find_config",
    "load_config",
    "locate_config",
    "masked_dump",
    "parse_config",
    "personal_board_dir",
    "read_config",
]

"""Configuration: YAML validated by pydantic, secrets from the environment.

Where it comes from, first found wins: ``--config PATH``, ``$SABHA_CONFIG``,
``./sabha.yaml``, else the built-in defaults. Strings may use ``${VAR}`` or
``${VAR:-default}`` (``$${`` is a literal ``${``). Relative paths are relative to the
config file's folder (the current folder for the built-in defaults). Every error names
the file, the key path and what is wrong; unknown keys are errors, so typos surface.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator, model_validator

from board.agent import AgentSettings
from board.roles import DEFAULT_ROSTERS, GENERAL, RoleOverride, RosterSpec, is_role_slug
from board.service import BoardSettings

CONFIG_ENV = "SABHA_CONFIG"
DEFAULT_CONFIG_NAME = "sabha.yaml"

_VAR = re.compile(r"\$(\$)?\{([^}]*)\}")
_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SECRET_KEYS = re.compile(r"(token|secret|api_key|password|app_secret)$", re.IGNORECASE)


class ConfigError(Exception):
    """The config cannot be used. ``str()`` is a message for the person who wrote it."""


class StrictModel(BaseModel):
    """Base for config sections: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", validate_default=True)


class AgentOverrideConfig(StrictModel):
    """``board.agents.<role>``: per-role overrides of what the soul file says."""

    name: str | None = Field(None, min_length=1, max_length=64)
    emoji: str | None = Field(None, min_length=1, max_length=16)
    model: str | None = Field(None, min_length=1)
    soul_file: str | None = Field(None, min_length=1, description="relative to the workspace")
    tools: list[str] | None = None


class BoardSection(StrictModel):
    """``board``: the roster and its agents."""

    roster: str = "board"
    rosters: dict[str, list[str]] = Field(default_factory=dict)
    agents: dict[str, AgentOverrideConfig] = Field(default_factory=dict)
    history_messages: int = Field(20, ge=0, le=1000)

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
            raise ValueError(f"roster {self.roster!r} is unknown; use one of {', '.join(sorted(known))} or define it under board.rosters")
        return self


class LLMSection(StrictModel):
    """``llm``: which model answers."""

    model: str = Field("offline", min_length=1, description="provider:model, or offline")
    max_tokens: int = Field(1024, ge=16, le=200_000)


class LoggingSection(StrictModel):
    """``logging``: how chatty the daemon is."""

    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"


class Config(StrictModel):
    """The whole config file."""

    workspace: Path = Path("workspace")
    data_dir: Path = Path("sessions")
    llm: LLMSection = Field(default_factory=LLMSection)
    board: BoardSection = Field(default_factory=BoardSection)
    logging: LoggingSection = Field(default_factory=LoggingSection)


@dataclass(frozen=True)
class LoadedConfig:
    """A validated config, where it came from, and its folder for relative paths."""

    config: Config
    source: Path | None
    base_dir: Path

    @property
    def workspace(self) -> Path:
        """The workspace folder, absolute."""
        return (self.base_dir / self.config.workspace).resolve()

    @property
    def data_dir(self) -> Path:
        """The data folder (transcripts, state db), absolute."""
        return (self.base_dir / self.config.data_dir).resolve()

    def board_settings(self) -> BoardSettings:
        """The plain values the board needs."""
        board = self.config.board
        overrides = {
            role: RoleOverride(
                name=o.name,
                emoji=o.emoji,
                model=o.model,
                soul_file=o.soul_file,
                tools=tuple(o.tools) if o.tools is not None else None,
            )
            for role, o in board.agents.items()
        }
        roster = RosterSpec.build(board.roster, custom=board.rosters, overrides=overrides)
        return BoardSettings(
            workspace=self.workspace,
            data_dir=self.data_dir,
            roster=roster,
            agent=AgentSettings(
                default_model=self.config.llm.model,
                history_messages=board.history_messages,
                max_tokens=self.config.llm.max_tokens,
            ),
        )


def find_config(explicit: str | Path | None, env: dict[str, str] | None = None) -> Path | None:
    """Which config file to use (None = built-in defaults). Raises ConfigError if a named one is missing."""
    env = dict(os.environ) if env is None else env
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise ConfigError(f"config file {path} does not exist (given with --config)")
        return path
    if env.get(CONFIG_ENV):
        path = Path(env[CONFIG_ENV]).expanduser()
        if not path.is_file():
            raise ConfigError(f"config file {path} does not exist (named by ${CONFIG_ENV})")
        return path
    local = Path.cwd() / DEFAULT_CONFIG_NAME
    return local if local.is_file() else None


def _interpolate(node: Any, path: tuple[str, ...], env: dict[str, str], errors: list[str]) -> Any:
    if isinstance(node, dict):
        return {k: _interpolate(v, (*path, str(k)), env, errors) for k, v in node.items()}
    if isinstance(node, list):
        return [_interpolate(v, (*path, str(i)), env, errors) for i, v in enumerate(node)]
    if not isinstance(node, str) or "${" not in node:
        return node

    def replace(match: re.Match[str]) -> str:
        if match.group(1):  # $${...} is a literal ${...}
            return "${" + match.group(2) + "}"
        expr = match.group(2)
        name, sep, default = expr.partition(":-")
        name = name.strip()
        if not _VAR_NAME.match(name):
            errors.append(f"{_dotted(path)}: ${{{expr}}} is not a valid variable reference (use ${{NAME}} or ${{NAME:-default}})")
            return ""
        value = env.get(name)
        if value is None or (sep and value == ""):
            if sep:
                return default
            errors.append(f"{_dotted(path)}: environment variable {name} is not set (export it, or write ${{{name}:-default}})")
            return ""
        return value

    return _VAR.sub(replace, node)


def _dotted(path: tuple[str, ...] | tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in path) or "(top level)"


def _format_validation(exc: ValidationError) -> list[str]:
    lines = []
    for err in exc.errors():
        loc = _dotted(tuple(p for p in err["loc"]))
        if err["type"] == "extra_forbidden":
            lines.append(f"{loc}: unknown key (check the spelling; config.example.yaml lists every option)")
        else:
            msg = err["msg"].removeprefix("Value error, ")
            given = err.get("input")
            shown = "" if isinstance(given, (dict, list)) or given is None else f" (got {given!r})"
            lines.append(f"{loc}: {msg}{shown}")
    return lines


def parse_config(text: str, *, source: str, env: dict[str, str] | None = None) -> Config:
    """Parse and validate config text; raises ConfigError naming ``source``."""
    env = dict(os.environ) if env is None else env
    try:
        raw = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"config {source}: not valid YAML{where}: {problem}") from exc
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"config {source}: the top level must be a mapping of keys (workspace:, llm:, board: ...)")
    errors: list[str] = []
    data = _interpolate(raw, (), env, errors)
    if errors:
        raise ConfigError(f"config {source}:\n  " + "\n  ".join(errors))
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"config {source}:\n  " + "\n  ".join(_format_validation(exc))) from exc


def load_config(explicit: str | Path | None = None, env: dict[str, str] | None = None) -> LoadedConfig:
    """Find, read and validate the config; see the module docstring."""
    path = find_config(explicit, env)
    if path is None:
        return LoadedConfig(config=parse_config("", source="(built-in defaults)", env=env), source=None, base_dir=Path.cwd())
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config {path}: not UTF-8 text (byte {exc.start})") from exc
    except OSError as exc:
        raise ConfigError(f"config {path}: cannot be read ({exc.strerror})") from exc
    config = parse_config(text, source=str(path), env=env)
    return LoadedConfig(config=config, source=path.resolve(), base_dir=path.resolve().parent)


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
        if isinstance(node, Path):
            return str(node)
        return node

    return mask(config.model_dump(mode="python"))


__all__ = ["Config", "ConfigError", "LoadedConfig", "load_config", "masked_dump", "parse_config", "GENERAL"]

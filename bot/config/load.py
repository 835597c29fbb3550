"""The whole reading of the config: the file validated by the pydantic models, secrets from the environment.

:func:`load_config` is the reading of every command that takes no fast path (``sabha run``, ``chat``,
``config check`` ...; ``ask`` and ``souls`` too when :mod:`bot.config.plain` / :mod:`bot.config.layout`
cannot vouch for the file). Which file, its YAML and its ``${VAR}`` references are
:mod:`bot.config.file`'s (the same for every reader); the models are :mod:`bot.config.sections`.
Relative paths are relative to the config file's folder. Every error names the file, the key
path and what is wrong; unknown keys are errors, so typos surface. A secret written into the
file itself is accepted with a warning (:attr:`LoadedConfig.warnings`). An unset variable in
a channel's section (``telegram``, ``whatsapp``) stops only what needs the channels:
loaded with ``channels=False`` (``sabha ask``, ``chat``, ``souls`` ...) that section is
skipped and said so in :attr:`LoadedConfig.skipped`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, get_args, get_origin

from pydantic import BaseModel, SecretStr, ValidationError

from bot.config.file import (
    PROVIDER_KEY_ENV,
    SECRET_KEY,
    ConfigError,
    dotted_path,
    interpolate,
    locate_config,
    parse_yaml,
    read_text,
)
from bot.config.loaded import LoadedConfig
from bot.config.pydantic_plugins import skip_plugin_discovery_when_none
from bot.config.sections import Config

__all__ = ["SECRET_ENV", "ParsedConfig", "channel_sections", "literal_secrets", "load_config", "masked_dump",
           "parse_config", "read_config"]

#: The variable to suggest for a secret written into the file, by key path.
SECRET_ENV = {
    "telegram.token": "TELEGRAM_BOT_TOKEN",
    "telegram.webhook_secret": "TELEGRAM_WEBHOOK_SECRET",
    "whatsapp.access_token": "WHATSAPP_ACCESS_TOKEN",
    "whatsapp.app_secret": "WHATSAPP_APP_SECRET",
    "whatsapp.verify_token": "WHATSAPP_VERIFY_TOKEN",
    "slack.bot_token": "SLACK_BOT_TOKEN",
    "slack.signing_secret": "SLACK_SIGNING_SECRET",
    "slack.app_token": "SLACK_APP_TOKEN",
    "discord.token": "DISCORD_BOT_TOKEN",
    "server.mcp.token": "SABHA_MCP_TOKEN",
    **{f"llm.providers.{name}.api_key": env for name, env in PROVIDER_KEY_ENV.items()},
}


def literal_secrets(raw: Any, source: str, path: tuple[str, ...] = ()) -> list[str]:
    """A warning per secret written into the file itself instead of read from ``${VAR}``."""
    found: list[str] = []
    if isinstance(raw, dict):
        for key, value in raw.items():
            found += literal_secrets(value, source, (*path, str(key)))
    elif isinstance(raw, str) and raw.strip() and "${" not in raw and path and SECRET_KEY.search(path[-1]):
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
            meant = _meant_key(tuple(err["loc"]))
            hint = f": did you mean {meant!r}? (" if meant else " (check the spelling; "
            lines.append(f"{loc}: unknown key{hint}config.example.yaml lists every option)")
        else:
            msg = err["msg"].removeprefix("Value error, ")
            given = err.get("input")
            secret_bearing = loc == "state.url"  # its own message shows it, without a password
            shown = "" if isinstance(given, (dict, list)) or given is None or secret_bearing else f" (got {given!r})"
            lines.append(f"{loc}: {msg}{shown}")
    return lines


def _meant_key(loc: tuple[Any, ...]) -> str | None:
    """The key an unknown key at ``loc`` most likely misspells: the closest field name (or alias) of
    the section model at that path (``llm.modle``: ``model``), by :mod:`difflib`; None when none is close."""
    import difflib

    kind: Any = Config
    for part in loc[:-1]:
        kind = _unwrap(kind)
        if _is_model(kind):
            field = kind.model_fields.get(part) or next((f for f in kind.model_fields.values() if f.alias == part),
                                                        None)
            kind = field.annotation if field is not None else None
        elif get_origin(kind) in (dict, Mapping, list, tuple):  # past a mapping's key or a list's index
            kind = get_args(kind)[-1] if get_args(kind) else None
        else:
            return None
    kind = _unwrap(kind)
    if not _is_model(kind):
        return None
    names = [*kind.model_fields, *(f.alias for f in kind.model_fields.values() if f.alias)]
    found = difflib.get_close_matches(str(loc[-1]), names, n=1, cutoff=0.6)
    return found[0] if found else None


def _is_model(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, BaseModel)


def _unwrap(kind: Any) -> Any:
    """``X | None`` (or a union with a model or a container in it): that model or container."""
    if _is_model(kind) or get_origin(kind) in (dict, Mapping, list, tuple):
        return kind
    for arg in get_args(kind):
        if _is_model(arg) or get_origin(arg) in (dict, Mapping, list, tuple):
            return arg
    return kind


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
        if isinstance(node, str) and node and SECRET_KEY.search(key):
            return "***"
        if isinstance(node, str) and "://" in node and "@" in node.split("://", 1)[1].split("/", 1)[0]:
            scheme, rest = node.split("://", 1)
            return f"{scheme}://***@{rest.split('@', 1)[1]}"  # credentials inside a URL
        if isinstance(node, Path):
            return str(node)
        if isinstance(node, Enum):  # a setting's kind (thinking: off ...) as it is written in the file
            return node.value
        return node

    return {k: mask(v, k) for k, v in config.model_dump(mode="python").items()}

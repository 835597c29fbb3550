"""The config file itself, before any validation: which file, its YAML, its ``${VAR}`` references.

Which file, first found wins (like git finds its repository): ``--config PATH`` (a file,
or a folder holding ``sabha.yaml``), ``$SABHA_CONFIG`` (the same), the nearest
``sabha.yaml`` in the current folder or any folder above it, the personal board
(``$XDG_DATA_HOME/sabha/sabha.yaml``, default ``~/.local/share/sabha``), else none: the
built-in defaults (:func:`locate_config` says which and how it was found). Strings may
use ``${VAR}`` or ``${VAR:-default}`` (``$${`` is a literal ``${``).

Shared by the three readers of the file (:mod:`bot.config.load` validates it whole, :mod:`bot.config.layout`
and :mod:`bot.config.plain` are the fast paths of ``sabha souls`` and ``sabha ask``) and imports no pydantic;
the package face :mod:`bot.config` re-exports what other packages use.
YAML is parsed with libyaml's ``CSafeLoader`` when PyYAML was built with it; a file it
refuses is read again by the pure-Python ``SafeLoader``, whose error names the character at
fault (``found character '\\t' that cannot start any token``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "CONFIG_ENV",
    "DEFAULT_CONFIG_NAME",
    "DEFAULT_DATA_DIR",
    "DEFAULT_MODEL",
    "DEFAULT_ROSTER",
    "DEFAULT_WORKSPACE",
    "KNOWN_PROVIDERS",
    "PROVIDER_KEY_ENV",
    "PROVIDER_KEY_ENV_ALSO",
    "SECRET_KEY",
    "ConfigError",
    "ConfigLocation",
    "FileData",
    "FoundBy",
    "check_model",
    "dotted_path",
    "find_config",
    "interpolate",
    "locate_config",
    "parse_yaml",
    "personal_board_dir",
    "read_data",
    "read_text",
]

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

CONFIG_ENV = "SABHA_CONFIG"
DEFAULT_CONFIG_NAME = "sabha.yaml"

#: The defaults of the keys every reader reads (the models' and both fast paths': one table, so they agree).
DEFAULT_WORKSPACE = "workspace"
DEFAULT_DATA_DIR = "sessions"
DEFAULT_MODEL = "offline"
DEFAULT_ROSTER = "board"

#: A key whose value is a secret (``telegram.token``, ``llm.providers.openai.api_key`` ...), for every
#: reader: the whole reading warns when one is written into the file and masks it in a dump; the plain
#: reading never vouches for a file that names one.
SECRET_KEY = re.compile(r"(token|secret|api_key|password|app_secret)$", re.IGNORECASE)

_VAR = re.compile(r"\$(\$)?\{([^}]*)\}")
_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")



class ConfigError(Exception):
    """The config cannot be used. ``str()`` is a message for the person who wrote it."""


KNOWN_PROVIDERS = ("offline", "anthropic", "openai", "google", "gemini")  # gemini: another name of google
PROVIDER_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "google": "GOOGLE_API_KEY"}
#: Variables read for a provider's key when its own (:data:`PROVIDER_KEY_ENV`) is not set.
PROVIDER_KEY_ENV_ALSO = {"google": ("GEMINI_API_KEY",)}


def check_model(value: str) -> str:
    """``value`` stripped if it names a known provider (and a model for a real one); ValueError otherwise."""
    value = value.strip()
    provider, _, name = value.partition(":")
    provider = provider.strip().lower()
    if provider not in KNOWN_PROVIDERS:
        raise ValueError(
            f"model {value!r} names an unknown provider {provider!r}; write provider:model with one of "
            f"{', '.join(KNOWN_PROVIDERS)} (e.g. anthropic:claude-sonnet-4-6, openai:gpt-4o-mini, "
            "google:gemini-2.5-flash, offline)"
        )
    if provider != "offline" and not name.strip():
        raise ValueError(f"model {value!r} needs a model name after '{provider}:'")
    return value


class FoundBy(StrEnum):
    """How the config file was found (said by ``sabha config check`` and when a board is made)."""

    OPTION = "--config"
    ENV = "$SABHA_CONFIG"
    SEARCH = "the nearest sabha.yaml"
    PERSONAL = "the personal board"
    NONE = "nothing found: built-in defaults"


@dataclass(frozen=True)
class ConfigLocation:
    """Which config file to use (``path`` None: none was found) and how it was found."""

    path: Path | None
    found_by: FoundBy
    searched_from: Path


def personal_board_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where the personal board lives: ``$XDG_DATA_HOME/sabha``, default ``~/.local/share/sabha``.

    It is used when no ``sabha.yaml`` is found, so every folder outside a board shares one board.
    """
    env = os.environ if env is None else env
    data_home = env.get("XDG_DATA_HOME", "").strip()
    if data_home and Path(data_home).is_absolute():
        return Path(data_home) / "sabha"
    home = env.get("HOME", "").strip()
    return (Path(home) if home else Path.home()) / ".local" / "share" / "sabha"


def _named_file(given: str | Path, how: str) -> Path:
    path = Path(given).expanduser()
    if path.is_dir():
        inside = path / DEFAULT_CONFIG_NAME
        if not inside.is_file():
            raise ConfigError(f"{path} is a folder with no {DEFAULT_CONFIG_NAME} in it ({how}); "
                              f"run `sabha init {path}` to make a board there, or name the file itself")
        return inside
    if not path.is_file():
        raise ConfigError(f"config file {path} does not exist ({how})")
    return path


def locate_config(explicit: str | Path | None = None, env: Mapping[str, str] | None = None,
                  cwd: Path | None = None) -> ConfigLocation:
    """Find the config file as the module docstring says. Raises ConfigError when a named one is missing."""
    env = os.environ if env is None else env
    here = (cwd or Path.cwd()).resolve()
    if explicit:
        return ConfigLocation(_named_file(explicit, "given with --config"), FoundBy.OPTION, here)
    if env.get(CONFIG_ENV, "").strip():
        return ConfigLocation(_named_file(env[CONFIG_ENV].strip(), f"named by ${CONFIG_ENV}"), FoundBy.ENV, here)
    for folder in (here, *here.parents):
        candidate = folder / DEFAULT_CONFIG_NAME
        if candidate.is_file():
            return ConfigLocation(candidate, FoundBy.SEARCH, here)
    personal = personal_board_dir(env) / DEFAULT_CONFIG_NAME
    if personal.is_file():
        return ConfigLocation(personal, FoundBy.PERSONAL, here)
    return ConfigLocation(None, FoundBy.NONE, here)


def find_config(explicit: str | Path | None, env: Mapping[str, str] | None = None) -> Path | None:
    """Which config file to use (None = built-in defaults). Raises ConfigError if a named one is missing."""
    return locate_config(explicit, env).path


@dataclass(frozen=True)
class Problem:
    """A ``${VAR}`` reference that could not be replaced, where it is and why."""

    path: tuple[str, ...]
    text: str


def _interpolate(node: Any, path: tuple[str, ...], env: Mapping[str, str], errors: list[Problem]) -> Any:
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
            errors.append(Problem(path, f"{dotted_path(path)}: ${{{expr}}} is not a valid variable reference "
                                         "(use ${NAME} or ${NAME:-default})"))
            return ""
        value = env.get(name)
        if value is None or (sep and value == ""):
            if sep:
                return default
            errors.append(Problem(path, f"{dotted_path(path)}: environment variable {name} is not set "
                                         f"(export it, or write ${{{name}:-default}})"))
            return ""
        return value

    return _VAR.sub(replace, node)


def dotted_path(path: tuple[str, ...] | tuple[Any, ...]) -> str:
    """A key path as written in the file: ``llm.providers.openai``."""
    return ".".join(str(p) for p in path) or "(top level)"




def read_text(path: Path) -> str:
    """The config file's text; :class:`ConfigError` naming it when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config {path}: not UTF-8 text (byte {exc.start})") from exc
    except OSError as exc:
        raise ConfigError(f"config {path}: cannot be read ({exc.strerror})") from exc


def parse_yaml(text: str, source: str) -> dict[str, Any]:
    """The config's top-level mapping (empty text: ``{}``); :class:`ConfigError` naming ``source``."""
    if not text.strip():
        return {}
    try:
        raw = yaml.load(text, Loader=_LOADER)  # a safe loader
    except yaml.YAMLError:
        raw = _pure_python_yaml(text, source)  # its error names the character at fault
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"config {source}: the top level must be a mapping of keys (workspace:, llm:, board: ...)")
    return raw


def _pure_python_yaml(text: str, source: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"config {source}: not valid YAML{where}: {problem}") from exc


def interpolate(raw: dict[str, Any], env: Mapping[str, str]) -> tuple[dict[str, Any], list[Problem]]:
    """``raw`` with every ``${VAR}`` replaced, and the references that could not be."""
    problems: list[Problem] = []
    data = _interpolate(raw, (), env, problems)
    return data, problems


@dataclass(frozen=True)
class FileData:
    """The config file's data with every ``${VAR}`` replaced, where it is and how it was found."""

    path: Path
    found_by: FoundBy
    data: dict[str, Any]


def read_data(explicit: str | Path | None = None, env: Mapping[str, str] | None = None,
              cwd: Path | None = None) -> FileData | None:
    """The located file's data, as the fast paths (:mod:`bot.config.layout`, :mod:`bot.config.plain`)
    read it: None when no file is found or a ``${VAR}`` cannot be replaced (the whole reading then
    says what is wrong). Raises :class:`ConfigError` for a missing named file or one that is not YAML."""
    env = os.environ if env is None else env
    where = locate_config(explicit, env, cwd)
    if where.path is None:
        return None
    data, problems = interpolate(parse_yaml(read_text(where.path), str(where.path)), env)
    return None if problems else FileData(where.path, where.found_by, data)

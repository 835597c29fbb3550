"""What the MCP client is built from, as plain values (``board`` never imports ``bot``): one
:class:`ServerSpec` per server of ``mcp.servers`` and the limits of :class:`McpSettings`.

A server is either a command (stdio: ``command`` + ``args``) or a ``url`` (streamable HTTP). ``env`` names
the variables of Sabha's environment passed through to it (nothing else of Sabha's environment, its keys
included, reaches the server beyond the SDK's basics: PATH, HOME, LOGNAME, SHELL, TERM, USER, and LANG/LC_*);
``headers_env`` maps an HTTP header to the variable holding its value (a bearer token), read when it connects.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["DEFAULT_CALL_TIMEOUT_S", "DEFAULT_START_TIMEOUT_S", "SERVER_NAME", "McpSettings", "ServerSpec",
           "is_server_name"]

#: A server's name: a slug, so ``mcp:<name>`` and the tools' API names ``<name>__<tool>`` stay plain.
SERVER_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
DEFAULT_CALL_TIMEOUT_S = 30.0
DEFAULT_START_TIMEOUT_S = 30.0
_LOCALE = ("LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE")


def is_server_name(name: str) -> bool:
    """Whether ``name`` is a valid server name (lower-case letters, digits, ``_`` and ``-``; a letter first)."""
    return SERVER_NAME.fullmatch(name) is not None and "__" not in name


@dataclass(frozen=True)
class ServerSpec:
    """One server of ``mcp.servers``: how to reach it and its limits."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    url: str | None = None
    env: tuple[str, ...] = ()  # names of variables passed through from Sabha's environment
    headers_env: tuple[tuple[str, str], ...] = ()  # (HTTP header, variable holding its value)
    cwd: str | None = None
    call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S
    start_timeout_s: float = DEFAULT_START_TIMEOUT_S
    enabled: bool = True

    @property
    def transport(self) -> str:
        """``stdio`` or ``http``."""
        return "http" if self.url else "stdio"

    @property
    def where(self) -> str:
        """What the server is, for logs and ``sabha tools list``: the command line or the URL."""
        return self.url or " ".join((self.command or "", *self.args)).strip()

    def environment(self, environ: Mapping[str, str] | None = None) -> dict[str, str]:
        """The variables the server gets besides the SDK's basics: the locale and those ``env`` names
        (a name not set in Sabha's environment is left out)."""
        source = os.environ if environ is None else environ
        return {k: source[k] for k in (*_LOCALE, *self.env) if k in source}

    def headers(self, environ: Mapping[str, str] | None = None) -> dict[str, str]:
        """The HTTP headers, read from the environment now (unset variables are left out)."""
        source = os.environ if environ is None else environ
        return {header: source[var] for header, var in self.headers_env if var in source}


@dataclass(frozen=True)
class McpSettings:
    """``mcp``: the servers and the limits every call is held to."""

    servers: tuple[ServerSpec, ...] = ()
    max_calls_per_turn: int = 8
    result_max_chars: int = 16_000
    names: frozenset[str] = field(default=frozenset(), compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", frozenset(s.name for s in self.servers))

    def spec(self, name: str) -> ServerSpec | None:
        """The server called ``name``, if declared."""
        return next((s for s in self.servers if s.name == name), None)

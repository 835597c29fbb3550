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
from urllib.parse import parse_qsl, urlsplit

__all__ = ["DEFAULT_CALL_TIMEOUT_S", "DEFAULT_START_TIMEOUT_S", "SERVER_NAME", "McpSettings", "ServerSpec",
           "is_server_name"]

#: A server's name: a slug, so ``mcp:<name>`` and the tools' API names ``<name>__<tool>`` stay plain.
SERVER_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
DEFAULT_CALL_TIMEOUT_S = 30.0
DEFAULT_START_TIMEOUT_S = 30.0
_LOCALE = ("LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE")
#: A variable or an argument's flag whose name says it holds a secret.
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
_SECRET_MIN = 6  # a shorter value (``1``, ``true``) is not hidden everywhere it occurs


def _shown_args(args: tuple[str, ...]) -> tuple[str, ...]:
    """``args`` with the value of every flag whose name looks secret shown as ``***`` (``--api-key=x``,
    ``--token x``)."""
    shown: list[str] = []
    hide_next = False
    for arg in args:
        flag, eq, _value = arg.partition("=")
        if hide_next:
            shown.append("***")
            hide_next = False
        elif arg.startswith("-") and _SECRET_NAME.search(flag):
            shown.append(f"{flag}=***" if eq else arg)
            hide_next = not eq
        else:
            shown.append(arg)
    return tuple(shown)


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
        """What the server is, for logs, ``sabha doctor`` and ``sabha tools list``, with no secret in it: the
        URL without ``user:password@`` and with every query value shown as ``***``; the command line with each
        secret argument shown as ``***`` (:meth:`redact`)."""
        if self.url:
            return self.redact(self.url)
        return self.redact(" ".join((self.command or "", *_shown_args(self.args))).strip())

    def secrets(self, environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
        """The strings never shown: the URL's ``user:password`` and query values, the values of the arguments
        :func:`_shown_args` hides, and the values of the variables it is given (``env``, ``headers_env``) and of
        every variable of Sabha's environment whose name looks secret (KEY, TOKEN, SECRET, PASSWORD ...)."""
        source = os.environ if environ is None else environ
        found: list[str] = []
        if self.url:
            parts = urlsplit(self.url)
            if parts.password:
                found.append(parts.password)
            found.extend(v for _, v in parse_qsl(parts.query, keep_blank_values=False))
        found.extend(a for a, shown in zip(self.args, _shown_args(self.args), strict=True) if a != shown)
        named = {*self.env, *(var for _, var in self.headers_env)}
        found.extend(v for k, v in source.items() if k in named or _SECRET_NAME.search(k))
        return tuple(sorted({v for v in found if len(v) >= _SECRET_MIN}, key=len, reverse=True))

    def redact(self, text: str, environ: Mapping[str, str] | None = None) -> str:
        """``text`` (a URL, a command line, an error) with every secret of :meth:`secrets` shown as ``***``,
        any ``user:password@`` of a URL left out and every query value of a URL shown as ``***``."""
        text = re.sub(r"(?<=//)[^/@\s]*@", "", text)
        text = re.sub(r"([?&][^=&#\s]+=)[^&#\s]*", r"\1***", text)
        for secret in self.secrets(environ):
            text = text.replace(secret, "***")
        return text

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

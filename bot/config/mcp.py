"""Config section ``mcp``: the MCP servers whose tools the board may use, and the limits of every call.

Validated like every section (unknown keys are errors) and turned into the board's plain
:class:`board.tools.mcp.McpSettings` by :meth:`McpSection.settings`. A role gets a server when its soul front
matter ``tools:`` or ``board.agents.<role>.tools`` names ``mcp:<server>`` (or ``mcp:<server>.<tool>``);
:class:`bot.config.sections.Config` checks that every such name in the config is a server declared here.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pydantic import Field, field_validator, model_validator

from bot.config.base import StrictModel

if TYPE_CHECKING:
    from board.tools.mcp import McpSettings

__all__ = ["McpSection", "McpServerConfig"]

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_HEADER = re.compile(r"^[A-Za-z0-9-]{1,64}$")


class McpServerConfig(StrictModel):
    """``mcp.servers.<name>``: one MCP server, started as a command (stdio) or reached at a URL (streamable HTTP)."""

    command: str | None = Field(None, min_length=1, description=(
        "the program that runs the server over stdin/stdout, e.g. uvx or mcp-server-git (found on PATH)"))
    args: list[str] = Field(default_factory=list, description="its arguments, e.g. [--repository, /srv/repo]")
    url: str | None = Field(None, min_length=1, description=(
        "instead of command: the server's streamable-HTTP endpoint, e.g. http://127.0.0.1:3001/mcp"))
    cwd: str | None = Field(None, min_length=1, description="the folder the command runs in; unset: Sabha's")
    env: list[str] = Field(default_factory=list, description=(
        "names of environment variables passed through to the server (their values come from Sabha's "
        "environment); nothing else of it reaches the server besides PATH, HOME, USER, SHELL, TERM and the locale"))
    headers_env: dict[str, str] = Field(default_factory=dict, description=(
        "HTTP header -> the environment variable holding its value, e.g. {Authorization: GITHUB_MCP_AUTH} "
        "for a bearer token (the variable holds 'Bearer ...'); never the value itself"))
    call_timeout_s: float = Field(30, gt=0, le=3600, description=(
        "a call with no answer after this long is abandoned (the turn's own deadline may end it sooner)"))
    start_timeout_s: float = Field(30, gt=0, le=600, description=(
        "starting the server and listing its tools may take this long; then it counts as failed and is tried "
        "again after a backoff (1 s doubling to 60 s)"))
    enabled: bool = Field(True, description="false: declared but not started, its tools offered to nobody")

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("set either command (a server run over stdin/stdout) or url (streamable HTTP), not both")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"url must be an http(s) URL such as http://127.0.0.1:3001/mcp, not {self.url!r}")
        if self.url is None and self.headers_env:
            raise ValueError("headers_env is for a server reached at a url")
        return self

    @field_validator("env")
    @classmethod
    def _env_names(cls, value: list[str]) -> list[str]:
        bad = [v for v in value if not _ENV_NAME.fullmatch(v)]
        if bad:
            raise ValueError(f"env lists names of variables (like GITHUB_TOKEN), not {', '.join(map(repr, bad))}")
        return value

    @field_validator("headers_env")
    @classmethod
    def _headers(cls, value: dict[str, str]) -> dict[str, str]:
        for header, var in value.items():
            if not _HEADER.fullmatch(header):
                raise ValueError(f"{header!r} is not an HTTP header name")
            if not _ENV_NAME.fullmatch(var):
                raise ValueError(f"headers_env.{header} names the variable holding the value (like MCP_TOKEN), "
                                 "not the value itself")
        return value


class McpSection(StrictModel):
    """``mcp``: outside tools from MCP servers. No role has a server until its tools name ``mcp:<server>``."""

    servers: dict[str, McpServerConfig] = Field(default_factory=dict, description=(
        "name -> server; a name is a slug (a-z, 0-9, _ and -, a letter first), used as mcp:<name> in a role's "
        "tools and in citations [<name>.<tool>]"))
    max_calls_per_turn: int = Field(8, ge=1, le=100, description=(
        "outside tool calls one answer may make; past it the model is told to answer with what it has"))
    result_max_chars: int = Field(16_000, ge=500, le=1_000_000, description=(
        "a tool result longer than this is cut (the model sees '... N more characters')"))

    @field_validator("servers")
    @classmethod
    def _names(cls, value: dict[str, McpServerConfig]) -> dict[str, McpServerConfig]:
        from board.tools.mcp.settings import is_server_name

        bad = [name for name in value if not is_server_name(name)]
        if bad:
            raise ValueError(f"server name {bad[0]!r} is not a slug: use lower-case letters, digits, _ and - "
                             "(a letter first, at most 32, no '__'), e.g. git or time")
        return value

    def settings(self) -> McpSettings:
        """The board's plain values."""
        from board.tools.mcp import McpSettings, ServerSpec

        return McpSettings(
            servers=tuple(ServerSpec(name, command=s.command, args=tuple(s.args), url=s.url, env=tuple(s.env),
                                     headers_env=tuple(s.headers_env.items()), cwd=s.cwd,
                                     call_timeout_s=s.call_timeout_s, start_timeout_s=s.start_timeout_s,
                                     enabled=s.enabled)
                          for name, s in self.servers.items()),
            max_calls_per_turn=self.max_calls_per_turn, result_max_chars=self.result_max_chars)

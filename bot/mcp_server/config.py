"""Config section ``server.mcp``: the board's MCP endpoint (streamable HTTP) on ``sabha run``'s own server.

Off by default. On, it needs the owner's token (``token: ${SABHA_MCP_TOKEN}``; ``sabha mcp token`` makes one):
every request must carry ``Authorization: Bearer <token>``, and a client holding it acts as the owner, so a
missing or short token is a config error that says what to write, never an open endpoint.
"""

from __future__ import annotations

from pydantic import Field, SecretStr, field_validator, model_validator

from bot.config.base import StrictModel, blank_is_unset

__all__ = ["MIN_TOKEN_CHARS", "McpEndpointSection"]

#: A token shorter than this is refused (guessable); ``sabha mcp token`` makes 43 characters.
MIN_TOKEN_CHARS = 24


class McpEndpointSection(StrictModel):
    """``server.mcp``: the board as an MCP server over HTTP (other agents, desktop clients), behind a token."""

    enabled: bool = Field(False, description=(
        "serve the board's MCP tools (ask an advisor, convene a meeting, list decisions and action items) at "
        "server.mcp.path on the daemon's HTTP server; `sabha mcp serve` (stdio) needs none of this"))
    path: str = Field("/mcp", description="where the endpoint is served, e.g. http://127.0.0.1:8080/mcp")
    token: SecretStr | None = Field(None, description=(
        "the owner's token every request must carry as 'Authorization: Bearer <token>' (required when enabled; "
        f"at least {MIN_TOKEN_CHARS} characters): write ${{SABHA_MCP_TOKEN}} and export it (`sabha mcp token` "
        "prints a fresh one). A client holding it acts as the owner"))

    _blank_is_unset = blank_is_unset("token")

    @field_validator("path")
    @classmethod
    def _path(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if not value.startswith("/") or value in ("/ui", "/healthz", "/readyz", "/metrics") or value.startswith(
                "/ui/") or any(c in value for c in " ?#{}"):
            raise ValueError("must be a path of its own on the daemon's server, such as /mcp (not /ui, /healthz, "
                             "/readyz or /metrics)")
        return value

    @model_validator(mode="after")
    def _token_when_enabled(self) -> McpEndpointSection:
        if not self.enabled:
            return self
        token = self.token.get_secret_value().strip() if self.token is not None else ""
        if not token:
            raise ValueError("server.mcp.enabled is true but server.mcp.token is not set: write "
                             "token: ${SABHA_MCP_TOKEN} under server.mcp and export SABHA_MCP_TOKEN (`sabha mcp token` "
                             "prints a fresh one), or set enabled: false")
        if len(token) < MIN_TOKEN_CHARS:
            raise ValueError(f"server.mcp.token is {len(token)} characters long; it needs at least "
                             f"{MIN_TOKEN_CHARS} (`sabha mcp token` prints a fresh one)")
        return self

    def secret(self) -> str | None:
        """The token, when the endpoint is on."""
        return self.token.get_secret_value().strip() if self.enabled and self.token is not None else None

"""Config ``server.mcp``: off by default; on, it needs the owner's token, and says what to write when it is
missing or too short; the path is one of its own; the token never shows in ``sabha config show``."""

from __future__ import annotations

import pytest

from bot.config import ConfigError
from bot.config.load import masked_dump, parse_config

TOKEN = "t0ken-of-the-owner-0123456789abcdef"


def test_off_by_default_and_on_with_a_token() -> None:
    assert parse_config("", source="x").server.mcp.enabled is False
    section = parse_config("server:\n  mcp:\n    enabled: true\n    token: ${SABHA_MCP_TOKEN}\n", source="x",
                           env={"SABHA_MCP_TOKEN": TOKEN}).server.mcp
    assert section.secret() == TOKEN and section.path == "/mcp"
    dumped = str(masked_dump(parse_config("server:\n  mcp:\n    enabled: true\n    token: ${SABHA_MCP_TOKEN}\n",
                                          source="x", env={"SABHA_MCP_TOKEN": TOKEN})))
    assert TOKEN not in dumped


@pytest.mark.parametrize(("token", "said"), [
    ("", "server.mcp.token is not set: write token: ${SABHA_MCP_TOKEN}"),
    ("    token: ${SABHA_MCP_TOKEN:-}\n", "server.mcp.token is not set"),
    ("    token: short-one\n", "needs at least 24"),
])
def test_enabled_without_a_usable_token_is_a_config_error_saying_what_to_do(token: str, said: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(f"server:\n  mcp:\n    enabled: true\n{token}", source="sabha.yaml", env={})
    assert said in str(caught.value) and "sabha mcp token" in str(caught.value)


def test_an_unset_variable_is_named() -> None:
    with pytest.raises(ConfigError, match="environment variable SABHA_MCP_TOKEN is not set"):
        parse_config("server:\n  mcp:\n    enabled: true\n    token: ${SABHA_MCP_TOKEN}\n", source="x", env={})


@pytest.mark.parametrize("path", ["/ui", "/healthz", "mcp", "/a b"])
def test_the_path_is_one_of_its_own(path: str) -> None:
    with pytest.raises(ConfigError, match=r"server\.mcp\.path"):
        parse_config(f"server:\n  mcp:\n    path: '{path}'\n", source="x")

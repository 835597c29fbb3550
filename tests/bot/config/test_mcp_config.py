"""The ``mcp`` section: servers (a command or a URL), names that are slugs, environment by name only, and every
``mcp:`` name under ``board.agents`` a declared server (else a config error naming the key)."""

from __future__ import annotations

import pytest

from bot.config import ConfigError
from bot.config.load import parse_config

GIT = "mcp:\n  servers:\n    git:\n      command: mcp-server-git\n      args: [--repository, /srv/app]\n"


def test_a_server_and_a_role_given_it() -> None:
    config = parse_config(GIT + "board:\n  agents:\n    research:\n      tools: ['mcp:git', 'mcp:git.git_log']\n",
                          source="sabha.yaml", env={})
    settings = config.mcp.settings()
    [git] = settings.servers
    assert (git.name, git.command, git.args, git.transport) == ("git", "mcp-server-git", ("--repository", "/srv/app"),
                                                                "stdio")
    assert (settings.max_calls_per_turn, settings.result_max_chars, git.call_timeout_s) == (8, 16_000, 30)


@pytest.mark.parametrize(("text", "says"), [
    (GIT + "board:\n  agents:\n    research:\n      tools: [search_knowledge_base, 'mcp:github']\n",
     "board.agents.research.tools.1: 'mcp:github' names no server of mcp.servers (declared: git)"),
    ("mcp:\n  servers:\n    Git Hub:\n      command: x\n", "server name 'Git Hub' is not a slug"),
    ("mcp:\n  servers:\n    git:\n      command: x\n      url: http://127.0.0.1:1/mcp\n",
     "set either command (a server run over stdin/stdout) or url (streamable HTTP), not both"),
    ("mcp:\n  servers:\n    gh:\n      url: http://127.0.0.1:1/mcp\n      headers_env: {Authorization: Bearer abc}\n",
     "headers_env.Authorization names the variable holding the value"),
    ("mcp:\n  servers:\n    git:\n      command: x\n      env: ['TOKEN=abc']\n", "env lists names of variables"),
    ("mcp:\n  servers:\n    git:\n      command: x\n      shell: true\n", "shell"),
])
def test_a_mistake_is_a_config_error_that_names_it(text: str, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, source="sabha.yaml", env={})
    assert says in str(caught.value), str(caught.value)

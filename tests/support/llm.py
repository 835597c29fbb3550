"""Helpers shared by the LLM-layer tests: boards wired to fakes, a sample tool, envelopes."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from board.agent.runner import AgentSettings
from board.agent.tools import Tool, ToolContext, ToolResult
from board.app import Board, BoardSettings
from board.envelope import Envelope
from board.llm.base import ToolSpec
from board.llm.resilience import RetryPolicy
from board.roles import RosterSpec
from board.storage.url import StateURL
from bot.app import all_migrations, build_providers
from bot.config import LoadedConfig
from bot.config.load import parse_config
from tests.support.fakes.anthropic_api import FakeAnthropic
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.fakes.scripted_model import ScriptedModel

FAST_RETRY = RetryPolicy(timeout_s=5.0, retries=1, backoff_s=0.01, backoff_max_s=0.05, retry_after_max_s=1.0)

FAST_RETRY_YAML = """
  retry: {retries: 1, backoff_s: 0.01, backoff_max_s: 0.05, retry_after_max_s: 1}
  timeout_s: 5
"""

LOOKUP_SCHEMA = {
    "type": "object",
    "properties": {"q": {"type": "string", "minLength": 1}},
    "required": ["q"],
    "additionalProperties": False,
}


def envelope(text: str, **kw: Any) -> Envelope:
    """A console message from the owner."""
    kw.setdefault("is_owner", True)
    return Envelope(channel="console", text=text, sender="owner", sender_name="Owner", **kw)


@dataclass
class LookupTool:
    """A tool that answers GST questions and remembers every context it was called with."""

    name: str = "lookup"
    fail_with: Exception | None = None
    seen: list[tuple[dict[str, Any], ToolContext]] = field(default_factory=list)

    def tool(self) -> Tool:
        """The registrable tool."""

        async def handler(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
            self.seen.append((args, ctx))
            if self.fail_with is not None:
                raise self.fail_with
            return ToolResult.success({"answer": f"GST on {args['q']} is 18%"})

        return Tool(ToolSpec(self.name, "Look up a tax rate.", LOOKUP_SCHEMA), handler, timeout_s=5)


async def scripted_board(workspace: Path, data_dir: Path, model: ScriptedModel, *, state: StateURL | None = None,
                         **agent: Any) -> Board:
    """A board whose every role talks to ``model`` (``scripted:main`` unless ``default_model`` is given);
    its state on ``state`` (the ``state_url`` fixture: SQLite or PostgreSQL) or the data dir's SQLite file."""
    agent.setdefault("default_model", f"{model.name}:main")
    agent.setdefault("retry", FAST_RETRY)
    settings = BoardSettings(workspace=workspace, data_dir=data_dir, roster=RosterSpec(),
                             agent=AgentSettings(**agent), state=state)
    # a PostgreSQL state (the state_url fixture) holds every migration Sabha knows: the board must know them too
    return await Board.open(settings, model.registry(), migrations=all_migrations() if state is not None else ())


async def configured_board(tmp_path: Path, workspace: Path, yaml_text: str, env: dict[str, str] | None = None) -> Board:
    """A board built from config text the way the daemon builds it (real providers)."""
    env = env or {}
    config = parse_config(yaml_text, source="test.yaml", env=env)
    loaded = LoadedConfig(config=config, source=None, base_dir=tmp_path)
    settings = replace(loaded.board_settings(), workspace=workspace, data_dir=tmp_path / "sessions")
    return await Board.open(settings, build_providers(loaded, env=env))


async def provider_board(tmp_path: Path, workspace: Path, model: str, provider: str, extra: str = "") -> Board:
    """A configured board on ``model`` with fast retries, one ``provider`` line and ``extra`` config text."""
    yaml_text = f"""
llm:
  model: {model}
{FAST_RETRY_YAML}
  providers:
    {provider}
{extra}
"""
    return await configured_board(tmp_path, workspace, yaml_text)


async def openai_board(tmp_path: Path, workspace: Path, fake: FakeOpenAI, extra: str = "", *,
                       stream: bool = False) -> Board:
    """A configured board on the fake OpenAI (gpt-4o-mini, key ``sk-test``)."""
    streaming = ", stream: true" if stream else ""
    provider = f'openai: {{base_url: "{fake.base_url}", api_key: "sk-test"{streaming}}}'
    return await provider_board(tmp_path, workspace, "openai:gpt-4o-mini", provider, extra)


async def anthropic_board(tmp_path: Path, workspace: Path, fake: FakeAnthropic, extra: str = "", *,
                          key: str = "ak-test", stream: bool = False) -> Board:
    """A configured board on the fake Anthropic (claude-sonnet-4-6)."""
    streaming = ", stream: true" if stream else ""
    provider = f'anthropic: {{base_url: "{fake.url}", api_key: "{key}"{streaming}}}'
    return await provider_board(tmp_path, workspace, "anthropic:claude-sonnet-4-6", provider, extra)


async def transcript_entries(board: Board, session_id: str) -> list[dict[str, Any]]:
    """Every event of a session's transcript (its file, or its rows on PostgreSQL; header excluded)."""
    return await board.parts.transcripts.entries(session_id)


async def session_entries(board: Board, key: str) -> list[dict[str, Any]]:
    """Every event of the live session of ``key``."""
    ref = await board.parts.sessions.current(key)
    assert ref is not None, f"no session {key}"
    return await transcript_entries(board, ref.session_id)

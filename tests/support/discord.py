"""Helpers for the Discord tests: the server's places on the fake Discord, a ``sabha.yaml`` with the Discord
channel pointed at it, and counting what reached each place."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from board.workspace.paths import copy_default_workspace
from tests.support.fakes.discord_api import GUILD_ID, TOKEN, ChannelKind, FakeDiscord

__all__ = ["BOARD", "CRITIC", "FINANCE", "FORUM", "FRIEND", "OWNER", "STRANGER", "answered", "env", "places",
           "write_config"]

OWNER = "1200000000000000001"
FRIEND = "1200000000000000002"
STRANGER = "1200000000000000666"
FINANCE = "1300000000000000001"  # finance's text channel
CRITIC = "1300000000000000002"  # critic's
BOARD = "1300000000000000003"  # the board channel (addressed by name)
FORUM = "1300000000000000004"  # the forum
_ECHO = re.compile(r"ECHO [^\n]*?\b(Q\d{3})\b")


def places(fake: FakeDiscord) -> FakeDiscord:
    """``fake`` with the server's channels: finance's and critic's, the board channel and the forum."""
    fake.add_channel(FINANCE, ChannelKind.TEXT, name="finance")
    fake.add_channel(CRITIC, ChannelKind.TEXT, name="critic")
    fake.add_channel(BOARD, ChannelKind.TEXT, name="board")
    fake.add_channel(FORUM, ChannelKind.FORUM, name="questions")
    return fake


def env() -> dict[str, str]:
    """The environment ``sabha run`` needs (the bot token)."""
    return {"DISCORD_BOT_TOKEN": TOKEN}


def write_config(root: Path, fake: FakeDiscord, model_url: str, *, users: Sequence[str] = (OWNER, FRIEND),
                 extra: Sequence[str] = (), discord: Sequence[str] = (), stream: bool = False) -> Path:
    """A workspace and a sabha.yaml with only the Discord channel, on the fakes (``discord``: more keys of the
    section; ``extra``: more top-level lines)."""
    if not (root / "workspace").exists():
        copy_default_workspace(root / "workspace")
    allowed = ", ".join(f'"{u}"' for u in users)
    lines = ["workspace: ./workspace", "data_dir: ./sessions", "server:", "  host: 127.0.0.1", "  port: 0",
             "llm:", "  model: openai:echo", "  retry: {retries: 0}", "  providers:", "    openai:",
             "      api_key: test-key", f"      base_url: {model_url}", f"      stream: {str(stream).lower()}",
             *extra,
             "discord:", "  token: ${DISCORD_BOT_TOKEN}", '  application_id: "1100000000000000002"',
             f"  api_base_url: {fake.base_url}", f'  guild_id: "{GUILD_ID}"',
             f'  channels: {{finance: "{FINANCE}", critic: "{CRITIC}"}}', f'  board_channel: "{BOARD}"',
             f'  forum_channel: "{FORUM}"', f"  allowed_user_ids: [{allowed}]", *[f"  {line}" for line in discord]]
    path = root / "sabha.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def answered(fake: FakeDiscord) -> Counter[str]:
    """How many of the bot's messages answer each ``Qnnn`` marker (the echo model repeats the question)."""
    return Counter(m for sent in fake.sent for m in set(_ECHO.findall(sent.content)))

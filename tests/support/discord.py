"""Helpers for the Discord tests: the server's places on the fake Discord, a ``sabha.yaml`` with the Discord
channel pointed at it, and counting what reached each place."""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from board.workspace.paths import copy_default_workspace
from tests.support.fakes.discord_api import GUILD_ID, TOKEN, ChannelKind, FakeDiscord, snowflake

__all__ = ["BOARD", "CRITIC", "FINANCE", "FORUM", "FRIEND", "OWNER", "STRANGER", "DiscordHarness", "answered",
           "discord_harness", "env", "places", "write_config"]

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


class DiscordHarness:
    """Discord for the channel contract suite (tests/support/channels.py): discord.py against the fake Discord,
    in-process. Conversations are a thread under finance's channel, one under critic's, a forum post and the
    owner's and a friend's DMs; redelivery is the gateway replaying a ``MESSAGE_CREATE``; a restart is a new
    session (what was sent meanwhile is read from the history)."""

    name = "discord"
    conversations = 5

    def __init__(self, board: Any, fake: FakeDiscord) -> None:
        self.board = board
        self.fake = fake
        self.channel: Any = None
        self._places: list[tuple[str, str]] = []  # (channel id, user)

    async def start(self) -> None:
        from bot.channels.discord.channel import DiscordChannel
        from bot.channels.discord.config import DiscordSection
        from bot.daemon import channel_parts

        if not self._places:
            threads = []
            for parent in (FINANCE, CRITIC, FORUM):
                thread = snowflake()
                self.fake.add_channel(thread, ChannelKind.PUBLIC_THREAD, name="conversation", parent_id=parent)
                threads.append(thread)
            self._places = [(threads[0], OWNER), (threads[1], FRIEND), (threads[2], OWNER),
                            (self.fake.dm_channel(OWNER), OWNER), (self.fake.dm_channel(FRIEND), FRIEND)]
        settings = DiscordSection.model_validate({
            "token": TOKEN, "application_id": "1100000000000000002", "api_base_url": self.fake.base_url,
            "guild_id": GUILD_ID, "channels": {"finance": FINANCE, "critic": CRITIC}, "board_channel": BOARD,
            "forum_channel": FORUM, "allowed_user_ids": [OWNER, FRIEND]})
        self.channel = DiscordChannel(channel_parts(self.board), settings)
        await self.channel.start()
        await self.fake.wait_for(lambda: self.channel.problem is None, "the gateway session (READY)")

    async def stop(self, grace: float = 5.0) -> None:
        if self.channel is not None:
            await self.channel.stop(grace)
            self.channel = None

    def send(self, conversation: int, text: str) -> Any:
        channel, user = self._places[conversation]
        return self.fake.user_says(channel, user, text)

    def send_as_stranger(self, text: str) -> Any:
        return self.fake.user_says(self._places[0][0], STRANGER, text)

    async def redeliver(self, message: Any) -> None:
        self.fake.dispatch("MESSAGE_CREATE", message)
        await asyncio.sleep(0.2)  # the gateway gives no acknowledgement to wait for; the sentinel after orders it

    def replies(self, conversation: int) -> list[str]:
        return [m.content for m in self.fake.in_channel(self._places[conversation][0])]

    def all_replies(self) -> list[str]:
        return [m.content for m in self.fake.sent]


@asynccontextmanager
async def discord_harness(board: Any) -> AsyncIterator[DiscordHarness]:
    """The Discord harness on a fresh fake Discord."""
    async with FakeDiscord() as fake:
        harness = DiscordHarness(board, places(fake))
        try:
            yield harness
        finally:
            await harness.stop()

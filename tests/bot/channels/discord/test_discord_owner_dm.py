"""The owner's place on Discord is their DM, known from the config alone (``dm-<first allowed user id>``): a
message the board sends on its own (a reminder, a scheduled report) reaches it through the channel's delivery, the
DM channel opened on the way; in-process, discord.py against the fake Discord."""

from __future__ import annotations

from board.app import Board
from board.envelope import Reply
from bot.config.sections import Config
from bot.intake.delivery import SendProgress
from tests.support.discord import OWNER, discord_harness


async def test_a_message_for_the_owner_reaches_their_dm(board: Board) -> None:
    config = Config.model_validate({"discord": {"token": "t", "application_id": "1", "allowed_user_ids": [OWNER]}})
    assert ("discord", f"dm-{OWNER}") in config.owner_chats()
    async with discord_harness(board) as harness:
        await harness.start()
        reply = Reply(role="general", name="General", emoji="🧭", text="Reminder: the board meets at 10.",
                      channel="discord", chat_id=f"dm-{OWNER}", kind="command")
        progress = SendProgress()
        await harness.channel.deliver(reply, progress)
        dm = harness.fake.dm_channel(OWNER)
        assert [m.content for m in harness.fake.in_channel(dm)] == ["**🧭 General**\nReminder: the board meets at 10."]
        assert progress.posted == 1

"""A decision's buttons once it is ruled on: the messages that carry Ratify / Veto / Revisit are recorded
(:class:`DecisionButtons`, table ``discord_button_posts``, migration 1176) and, when the decision is ratified,
vetoed or sent back (:class:`board.decisions.ratify.DecisionChange`), their buttons are replaced by one that says
the verdict (``✅ Ratified``; a press shows the decision: :func:`board.commands.decisions.settled_buttons`). A
message whose buttons could not be changed still works: a press is answered by its command ("already ratified").
"""

from __future__ import annotations

import logging

import aiohttp
import discord

from board.commands.decisions import settled_buttons
from board.conversation.transcripts import utc_now
from board.decisions.ratify import DecisionChange
from board.storage import Database
from bot.channels.discord.components import button_view

__all__ = ["DecisionButtons"]

log = logging.getLogger("sabha.discord")


class DecisionButtons:
    """See the module docstring; :meth:`changed` is a :class:`board.decisions.ratify.DecisionBook` listener."""

    def __init__(self, db: Database, client: discord.Client) -> None:
        self.db = db
        self.client = client
        self.changed_count = 0

    async def record(self, subject: str, channel_id: int, message_id: int) -> None:
        """Message ``message_id`` in ``channel_id`` carries the buttons of decision ``subject``."""
        await self.db.execute("INSERT INTO discord_button_posts(subject, channel_id, message_id, created_at) "
                              "VALUES (?, ?, ?, ?) ON CONFLICT (channel_id, message_id) DO NOTHING",
                              (subject, str(channel_id), str(message_id), utc_now()))

    async def changed(self, change: DecisionChange) -> None:
        """The decision was ruled on: its messages' buttons say so (a failure is logged)."""
        record = change.record
        rows = await self.db.fetchall("SELECT channel_id, message_id FROM discord_button_posts WHERE subject = ?",
                                      (record.meeting_id,))
        view = button_view(settled_buttons(record))
        for row in rows:
            message = self.client.get_partial_messageable(int(row["channel_id"])).get_partial_message(
                int(row["message_id"]))
            try:
                await message.edit(view=view)
            except (discord.HTTPException, aiohttp.ClientError, OSError, TimeoutError) as exc:
                log.warning("discord: the buttons of decision %s (message %s) still offer a ruling (%s); a press on "
                            "them is answered that it is %s", record.meeting_id, row["message_id"], exc,
                            record.verdict.value)
                continue
            self.changed_count += 1

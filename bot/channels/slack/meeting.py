"""A board meeting called in Slack, in the thread it was called in.

The relay is :class:`bot.channels.whatsapp.meeting.MeetingRelay` (channel-neutral but for its name: each round's
statements in one message under their speakers' names, the decision with its Ratify / Veto / Revisit buttons,
the minutes; what was posted recorded in ``meeting_posts`` as the request leaves and once Slack took it, so a
meeting resumed after a kill is caught up from its record and nothing posted is posted again). Its Markdown comes
out as WhatsApp's ``*bold*`` / ``_italic_``, which is Slack's mrkdwn too. Here a message goes to the meeting's
origin: ``<channel>/<thread_ts>`` is the thread the ``/meeting`` (or ``/board meeting ...``) was written in (a
DM's id alone: the DM), and buttons go as Block Kit (:mod:`.blocks`); a press is the presser's ``/ratify <id>``
through the intake (:mod:`.interactivity`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from board.envelope import Button
from bot.channels.meeting_posts import MeetingPosts
from bot.channels.slack.blocks import button_blocks
from bot.channels.slack.places import split_chat
from bot.channels.whatsapp.meeting import MeetingRelay
from bot.intake.delivery import SendProgress

if TYPE_CHECKING:
    from bot.channels.parts import ChannelParts
    from bot.channels.slack.outbound import SlackWeb

__all__ = ["slack_meetings"]


def slack_meetings(name: str, web: SlackWeb, uses: ChannelParts) -> MeetingRelay:
    """The relay of meetings whose origin is channel ``name`` (subscribed to the board's room by the caller)."""

    async def send(chat_id: str, body: str, reply_to: str | None, buttons: tuple[Button, ...] = (),
                   progress: SendProgress | None = None) -> None:
        channel, thread = split_chat(chat_id)
        await web.post(channel, body, thread, progress or SendProgress(), button_blocks(body, buttons))

    return MeetingRelay(name, send, room=uses.room, record=MeetingPosts(uses.db, name),
                        label_for=lambda role: uses.souls.profile(role).label)

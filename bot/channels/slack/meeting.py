"""A board meeting called in Slack, in the thread it was called in.

The relay is the channels' shared :class:`bot.channels.meeting_relay.MeetingRelay` (each round's statements in
one message under their speakers' names, the decision with its Ratify / Veto / Revisit buttons, the minutes; what
was posted recorded in ``meeting_posts`` as the request leaves and once Slack took it, so a meeting resumed after a
kill is caught up from its record and nothing posted is posted again). Here is how it looks in Slack
(:data:`SLACK_TEXT`): Markdown as mrkdwn (:func:`.format.to_mrkdwn`), messages cut at :data:`.format.MAX_TEXT`
characters, the buttons under the decision's last part. A message goes to the meeting's origin:
``<channel>/<thread_ts>`` is the thread the ``/meeting`` (or ``/board meeting ...``) was written in (a DM's id
alone: the DM), and buttons go as Block Kit (:mod:`.blocks`); the decision's message is recorded so its buttons
say the verdict once it is ruled on (:mod:`.verdicts`); a press is the presser's ``/ratify <id>`` through the
intake (:mod:`.interactivity`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from board.envelope import Button
from bot.channels.meeting_posts import MeetingPosts
from bot.channels.meeting_relay import MeetingRelay, RelayText
from bot.channels.slack.blocks import button_blocks
from bot.channels.slack.format import MAX_TEXT, split_text, to_mrkdwn
from bot.channels.slack.places import split_chat
from bot.intake.courier import ChannelTexts
from bot.intake.delivery import SendProgress

if TYPE_CHECKING:
    from bot.channels.parts import ChannelParts
    from bot.channels.slack.outbound import SlackWeb

__all__ = ["SLACK_TEXT", "slack_meetings"]

#: Told of each post with blocks: (channel, ts, text, blocks), see :meth:`.verdicts.SlackVerdicts.posted`.
Posted = Callable[[str, str, str, "Sequence[dict[str, Any]] | None"], Awaitable[None]]


def _last_with_buttons(pieces: list[str], buttons: tuple[Button, ...]) -> tuple[list[str], str | None]:
    """A Slack message holds a long text and its buttons (sections of 3,000 characters): the last piece carries
    them."""
    if not buttons:
        return pieces, None
    if not pieces:
        return [], "Choose below (or type the command):"
    return pieces[:-1], pieces[-1]


#: A Slack meeting message's text.
SLACK_TEXT = RelayText(markup=to_mrkdwn, split=split_text, limit=MAX_TEXT, with_buttons=_last_with_buttons)


def slack_meetings(name: str, web: SlackWeb, uses: ChannelParts, posted: Posted | None = None,
                   texts: ChannelTexts | None = None) -> MeetingRelay:
    """The relay of meetings whose origin is channel ``name`` (subscribed to the board's room by the caller);
    ``posted`` hears of each message sent with buttons; ``texts``: the channel's (the possibly-repeated line)."""

    async def send(chat_id: str, body: str, reply_to: str | None, buttons: tuple[Button, ...] = (),
                   progress: SendProgress | None = None) -> None:
        channel, thread = split_chat(chat_id)
        blocks = button_blocks(body, buttons)
        ts = await web.post(channel, body, thread, progress or SendProgress(), blocks)
        if blocks and posted is not None:
            await posted(channel, ts, body, blocks)

    return MeetingRelay(name, send, SLACK_TEXT, room=uses.room, record=MeetingPosts(uses.db, name),
                        label_for=lambda role: uses.souls.profile(role).label, texts=texts)

"""Board meetings called from WhatsApp, as WhatsApp shows them.

The relay is the channels' shared :class:`bot.channels.meeting_relay.MeetingRelay` (each round in one message,
the decision, the minutes; what was sent recorded, a resumed meeting caught up). Here is how its text looks on
WhatsApp (:data:`WHATSAPP_TEXT`): Markdown as WhatsApp's ``*bold*`` / ``_italic_`` (:func:`.format.to_whatsapp`),
bodies of at most 4,096 characters (:func:`.format.split_text`), and the Ratify / Veto / Revisit reply buttons
under the decision's last part when it fits a buttons message (:func:`.format.with_buttons`); a press is the owner
sending ``/ratify <id>``.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.channels.meeting_relay import RelayText
from bot.channels.meeting_relay import round_messages as relay_rounds
from bot.channels.whatsapp.format import MAX_BODY, split_text, to_whatsapp, with_buttons

__all__ = ["WHATSAPP_TEXT", "round_messages"]

#: A WhatsApp meeting message's text.
WHATSAPP_TEXT = RelayText(markup=to_whatsapp, split=split_text, limit=MAX_BODY, with_buttons=with_buttons)


def round_messages(topic: str, round_no: int, statements: Sequence[tuple[str, str]], limit: int = MAX_BODY,
                   ) -> list[str]:
    """A round's ``(speaker, Markdown text)`` statements as WhatsApp bodies of at most ``limit`` characters
    (:func:`bot.channels.meeting_relay.round_messages`)."""
    return relay_rounds(topic, round_no, statements, WHATSAPP_TEXT, limit)

"""Buttons in Telegram, besides sending them (:func:`.outbound.keyboard`): what a press is answered
with, and the decision messages whose buttons change once the decision is ruled on.

A press (``callback_query``) becomes an ordinary command arrival (:func:`.inbound.press_envelope`);
Telegram wants every press answered (``answerCallbackQuery``: the client's spinner stops). Sabha
answers once the arrival is *stored* (the durability rule: Telegram learns we have it only then),
with a short toast (:func:`toast`) that says it was received, not what came of it: the outcome is
the command's reply, posted in the chat like any answer, exactly once and quoting the message the
button was on. The toast cannot carry the outcome: it must come promptly (the press may wait in its
lane behind an answer being written; the spinner would turn meanwhile), and a toast is neither
stored nor resent, so an outcome said only there would be lost by a restart. A press that will
change nothing is told so at once: a stranger's (the access gate refuses it; nothing is stored),
and a member's on an owner-only button (its refusal also comes as the command's reply).

:class:`ButtonPosts` records the messages that carry a decision's Ratify / Veto / Revisit
(migration ``0811_telegram_button_posts``) and, when the decision is ruled on
(:class:`board.decisions.ratify.DecisionChange`), replaces their buttons with one that says the
verdict (``editMessageReplyMarkup``); a press on it shows the decision. A press on an old
button that still says Ratify is answered by the command like any other: "already ratified".
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from board.commands.decisions import settled_buttons
from board.conversation.transcripts import utc_now
from board.decisions.ratify import DecisionChange
from board.envelope import Envelope
from board.storage import Database
from bot.channels.telegram.outbound import Outbound, Target

__all__ = ["ButtonPosts", "Toast", "toast"]

log = logging.getLogger("sabha.telegram.buttons")


@dataclass(frozen=True)
class Toast:
    """What a press is answered with (``alert``: a dialog the presser closes, not a passing toast)."""

    text: str
    alert: bool = False


def toast(envelope: Envelope | None, *, admitted: bool, owner_only: set[str] | frozenset[str]) -> Toast:
    """The answer to a press that has been stored (``admitted``) or refused by the access gate."""
    if envelope is None:
        return Toast("This button no longer works; send the command instead.", alert=True)
    if not admitted:
        return Toast("Sorry, only the board's members can use these buttons.", alert=True)
    command = envelope.text.split(maxsplit=1)[0].lstrip("/").split("@", 1)[0].lower()
    if command in owner_only and not envelope.is_owner:
        return Toast(f"Only the board's owner can /{command}; nothing changed.", alert=True)
    return Toast(f"Received: /{command}. The answer follows in the chat.")


class ButtonPosts:
    """The decision messages with buttons, and changing them when the decision is ruled on."""

    def __init__(self, db: Database, outbound: Outbound) -> None:
        self.db = db
        self.outbound = outbound
        self.changed_count = 0

    async def record(self, subject: str, chat_id: int, message_id: int) -> None:
        """Message ``message_id`` in ``chat_id`` carries the buttons of decision ``subject``."""
        await self.db.execute("INSERT INTO telegram_button_posts(subject, chat_id, message_id, created_at) "
                              "VALUES (?, ?, ?, ?) ON CONFLICT (chat_id, message_id) DO NOTHING",
                              (subject, int(chat_id), int(message_id), utc_now()))

    async def changed(self, change: DecisionChange) -> None:
        """The decision was ruled on: its messages' buttons say so (a failure is logged; presses on
        the old buttons are still answered rightly by their commands)."""
        record = change.record
        rows = await self.db.fetchall("SELECT chat_id, message_id FROM telegram_button_posts WHERE subject = ?",
                                      (record.meeting_id,))
        buttons = settled_buttons(record)
        for row in rows:
            target = Target(int(row["chat_id"]))
            if await self.outbound.edit_buttons(target, int(row["message_id"]), buttons):
                self.changed_count += 1
            else:
                log.warning("telegram: the buttons of decision %s (message %s in chat %s) still offer a ruling; a "
                            "press on them is answered that it is %s", record.meeting_id, row["message_id"],
                            row["chat_id"], record.verdict.value)

"""Scheduled messages on WhatsApp: the 24-hour window and approved templates.

Meta delivers a business's free-form message to a user only within 24 hours of the user's
last message (error 131047 otherwise); after that only an approved *template*. A reminder
(or any scheduled message, :mod:`board.schedule`) is therefore sent by
:func:`scheduled_delivery`, which :class:`bot.scheduled.ChannelDeliver` uses for this channel:

- the user wrote within 24 hours (by the board's clock; their latest message in the inbox):
  the ordinary reply (:meth:`WhatsAppChannel.deliver`, with its buttons);
- the window is closed (or Meta says so with 131047): the template ``whatsapp.templates.reminder``
  (name and language), its one body variable ``{{1}}`` filled with the reminder's text on one line; a
  template carries no buttons, so the text ends with the commands they would send (:func:`template_text`);
- closed and no template configured: nothing is sent; the row waits (``sabha status`` says for
  what) and goes out as soon as the user writes again (the intake releases it).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from board.clock import utc
from board.envelope import Reply
from board.schedule import Delivered, Delivery, ScheduledWork
from bot.channels.whatsapp.config import TemplateRef
from bot.channels.whatsapp.limits import WINDOW_CLOSED
from bot.channels.whatsapp.outbound import Refused
from bot.intake.delivery import DeliveryOutcome, SendFailed, SendProgress

if TYPE_CHECKING:
    from bot.channels.whatsapp.channel import WhatsAppChannel

__all__ = ["TEMPLATE_PARAMETER_CHARS", "WINDOW", "scheduled_delivery", "template_content", "template_text",
           "window_open"]

log = logging.getLogger("sabha.whatsapp")

#: How long after a user's last message free-form messages may reach them.
WINDOW = timedelta(hours=24)
#: A template's text variable holds at most this many characters (Meta's limit is 1024; one line).
TEMPLATE_PARAMETER_CHARS = 1000


def template_content(template: TemplateRef, text: str) -> dict[str, Any]:
    """The ``content`` of a template message whose one body variable is ``text`` (on one line:
    Meta refuses new lines, tabs and runs of spaces in a template parameter)."""
    line = " ".join(text.split())
    if len(line) > TEMPLATE_PARAMETER_CHARS:
        line = line[: TEMPLATE_PARAMETER_CHARS - 1] + "\u2026"
    return {"type": "template", "template": {
        "name": template.name, "language": {"code": template.language},
        "components": [{"type": "body", "parameters": [{"type": "text", "text": line}]}]}}


async def window_open(channel: WhatsAppChannel, chat_id: str, now: datetime) -> bool:
    """Whether ``chat_id`` wrote within :data:`WINDOW` of ``now`` (their latest stored message)."""
    row = await channel.uses.db.fetchone(
        "SELECT MAX(received_at) AS last FROM inbound_messages WHERE channel = ? AND chat_id = ?",
        (channel.name, chat_id))
    if row is None or not row["last"]:
        return False
    try:
        last = utc(datetime.fromisoformat(str(row["last"])))
    except ValueError:
        return False
    return now - last < WINDOW


def _closed_reason(user: str) -> str:
    return (f"the WhatsApp 24-hour window with {user} is closed and whatsapp.templates.reminder is not set: "
            "it is sent when they next write")


def template_text(reply: Reply) -> str:
    """``reply``'s text as a template says it: with no buttons there, the commands they send said in words
    (``Done: /done 3 · Snooze: /snooze 3``)."""
    if not reply.buttons:
        return reply.text
    return f"{reply.text} " + " \u00b7 ".join(f"{b.label}: {b.command}" for b in reply.buttons)


async def _as_template(channel: WhatsAppChannel, work: ScheduledWork, reply: Reply,
                       progress: SendProgress) -> Delivered:
    template = channel.settings.templates.reminder
    user = channel.people.address(work.place.chat_id)
    if template is None:
        return Delivered(Delivery.WAIT, _closed_reason(user))
    try:
        wamid = await channel.graph.send_message(user, template_content(template, template_text(reply)),
                                                 progress=progress)
    except Refused as exc:
        log.error("whatsapp: the template %s to %s was refused: %s", template.name, user, exc.error)
        if exc.outcome is DeliveryOutcome.MAY_HAVE_ARRIVED:
            return Delivered(Delivery.MAY_HAVE_ARRIVED, str(exc))
        return Delivered(Delivery.NOT_SENT, f"the template {template.name} was refused: {exc.error} (check "
                                            "whatsapp.templates.reminder in WhatsApp Manager)")
    except SendFailed as exc:
        delivery = Delivery.MAY_HAVE_ARRIVED if exc.outcome is DeliveryOutcome.MAY_HAVE_ARRIVED else Delivery.NOT_SENT
        return Delivered(delivery, str(exc))
    if wamid:
        await channel.deliveries.accepted(wamid, user, None)
    log.info("whatsapp: %s sent to %s as the template %s (the 24-hour window was closed)", work.key, user,
             template.name)
    return Delivered(Delivery.SENT, f"sent as the template {template.name} (the 24-hour window was closed)")


async def scheduled_delivery(channel: WhatsAppChannel, work: ScheduledWork, reply: Reply,
                             sending: Callable[[], Awaitable[None]]) -> Delivered:
    """Deliver a scheduled ``reply``; see the module docstring."""
    # after_refusal: Meta's refusal (131047, a rate limit) posted nothing, so the row's "sending" mark is
    # taken back (and set again right before the template or the retry leaves); see board.schedule.runner.Sending
    progress = SendProgress(before_first_request=sending, after_refusal=getattr(sending, "refused", None))
    if not work.place.chat_id or not await window_open(channel, work.place.chat_id, channel.uses.clock.now()):
        return await _as_template(channel, work, reply, progress)
    try:
        await channel.deliver(reply, progress)
    except Refused as exc:
        if exc.error.code == WINDOW_CLOSED and exc.outcome is DeliveryOutcome.NOT_SENT:
            return await _as_template(channel, work, reply, progress)  # Meta's clock says closed
        if exc.outcome is DeliveryOutcome.MAY_HAVE_ARRIVED:
            return Delivered(Delivery.MAY_HAVE_ARRIVED, str(exc))
        return Delivered(Delivery.NOT_SENT, str(exc))
    except SendFailed as exc:
        delivery = Delivery.MAY_HAVE_ARRIVED if exc.outcome is DeliveryOutcome.MAY_HAVE_ARRIVED else Delivery.NOT_SENT
        return Delivered(delivery, str(exc))
    return Delivered(Delivery.SENT, progress.note)

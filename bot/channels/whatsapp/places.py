"""Where a WhatsApp message was written, and which message an answer quotes.

A conversation's id (the envelope's ``chat_id``, a reply's destination) is the user's phone
number (digits), their business-scoped user id (``US.1349...``: it has a dot), or a group
id from Meta's Groups API (anything else, e.g. ``Y2FwaV9ncm91cDox...``): :func:`is_group_id`
tells them apart, so a reply stored before a restart still goes to the right place, and
:func:`recipient` gives the Graph API fields that address it.

Groups are not a place Sabha answers unless configured (:class:`GroupGate`): a message in a
group that is not in ``whatsapp.allowed_groups`` costs nothing and is logged once per group.

An edit is stored under its own id (each edit is a new message to the intake) but answered
quoting the message it edits: :func:`edit_message_id` joins the two, :func:`quoted_wamid`
gives the one to quote (and to mark read).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

__all__ = ["GroupGate", "edit_message_id", "is_group_id", "quoted_wamid", "recipient"]

log = logging.getLogger("sabha.whatsapp")

_EDITS = " edits "  # never in a wamid (base64 and dots)


def is_group_id(chat_id: str) -> bool:
    """True for a group id: neither a phone number (digits) nor a business-scoped user id (dotted)."""
    return not chat_id.isdigit() and "." not in chat_id


def recipient(chat_id: str) -> dict[str, str]:
    """The Graph API fields that address ``chat_id``: a group (``recipient_type: group``), a
    business-scoped user id (``recipient``) or a phone number (``to``)."""
    if is_group_id(chat_id):
        return {"recipient_type": "group", "to": chat_id}
    return {"recipient_type": "individual", ("recipient" if "." in chat_id else "to"): chat_id}


def edit_message_id(edit_wamid: str, original: str | None) -> str:
    """The intake's id of an edit: its own wamid, and the message it edits (quoted in the answer)."""
    return f"{edit_wamid}{_EDITS}{original}" if original else edit_wamid


def quoted_wamid(message_id: str) -> str:
    """The wamid an answer to ``message_id`` quotes: the edited message for an edit, else itself."""
    return message_id.rpartition(_EDITS)[2]


class GroupGate:
    """Which groups the board answers in (``whatsapp.allowed_groups``); others are logged once each."""

    def __init__(self, allowed: Iterable[str]) -> None:
        self.allowed = set(allowed)
        self.ignored = 0
        self._logged: set[str] = set()

    def reconfigure(self, allowed: Iterable[str]) -> None:
        """A new list (a config reload): a group ignored from now on is logged again."""
        self.allowed = set(allowed)
        self._logged.clear()

    def admits(self, group_id: str, wamid: str) -> bool:
        """True when the board answers in ``group_id``; else the message is ignored (logged once per group)."""
        if group_id in self.allowed:
            return True
        self.ignored += 1
        if group_id not in self._logged:
            self._logged.add(group_id)
            log.warning("whatsapp: ignored message %s in group %s: the board answers in a group only when it is in "
                        "whatsapp.allowed_groups (add it there to let the board answer in it); further messages "
                        "in this group are not logged", wamid, group_id)
        return False

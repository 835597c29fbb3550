"""Webhook notifications from Meta: the signature, the payload's shape, and what each item is.

:func:`signature_problem` checks ``X-Hub-Signature-256`` (HMAC-SHA256 of the *raw* body
with the app secret, compared in constant time). :func:`parse_notification` validates a
body with pydantic before anything is written (a bad body is a :class:`ValueError` whose
text says what is wrong). :func:`read_items` walks every ``entry[].changes[].value`` and
sorts its ``messages[]``, ``statuses[]`` and ``errors[]`` into typed items: a message for
the board (text, and the text of an interactive or template button reply), a message only
a fixed "text only" line answers (media, location, contacts, order, voice), or an event
that is logged and gets no reply (reaction, unsupported, system and unknown types).

A user is keyed on the phone number (``from`` / ``contacts[].wa_id``) when Meta sends it,
else on the business-scoped user id (``messages[].from_user_id`` / ``contacts[].user_id``),
the only id of a user who hides their number.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "Disposition",
    "InboundMessage",
    "MessageType",
    "Notification",
    "ReportedError",
    "SignatureProblem",
    "StatusUpdate",
    "WaError",
    "disposition_of",
    "is_bsuid",
    "parse_notification",
    "read_items",
    "signature_problem",
]


class SignatureProblem(StrEnum):
    """Why a webhook's signature was refused."""

    MISSING = "missing"  # 401
    MISMATCH = "mismatch"  # 403


def signature_problem(body: bytes, header: str | None, secret: bytes) -> SignatureProblem | None:
    """None when ``header`` (``sha256=<hex>``) is the HMAC-SHA256 of ``body`` with ``secret``."""
    if not header:
        return SignatureProblem.MISSING
    scheme, _, given = header.strip().partition("=")
    if scheme.lower() != "sha256" or not given:
        return SignatureProblem.MISMATCH
    expected = hmac.new(secret, body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected.encode(), given.strip().lower().encode()):
        return SignatureProblem.MISMATCH
    return None


class _Model(BaseModel):
    # Meta adds fields over time: unknown keys are kept, known ones must have the right type.
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class WaError(_Model):
    """An error object as Meta writes it in webhooks (``code``, ``title``, ``message``, ``error_data``)."""

    code: int
    title: str | None = None
    message: str | None = None
    error_data: dict[str, Any] | None = None

    @property
    def details(self) -> str:
        """The most specific text Meta gave."""
        detail = (self.error_data or {}).get("details")
        return str(detail or self.message or self.title or "")


class _Profile(_Model):
    name: str | None = None


class _Contact(_Model):
    wa_id: str | None = None
    user_id: str | None = None
    profile: _Profile | None = None


class _Metadata(_Model):
    phone_number_id: str
    display_phone_number: str | None = None


class _Text(_Model):
    body: str


class _Button(_Model):
    text: str | None = None
    payload: str | None = None


class _Reply(_Model):
    id: str | None = None
    title: str


class _Interactive(_Model):
    type: str
    button_reply: _Reply | None = None
    list_reply: _Reply | None = None


class _Context(_Model):
    id: str | None = None
    forwarded: bool | None = None


class _Message(_Model):
    id: str = Field(min_length=1)
    from_: str | None = Field(None, alias="from")
    from_user_id: str | None = None
    timestamp: str | None = None
    type: str
    text: _Text | None = None
    button: _Button | None = None
    interactive: _Interactive | None = None
    context: _Context | None = None
    errors: list[WaError] = Field(default_factory=list)


class _Status(_Model):
    id: str = Field(min_length=1)
    status: str
    timestamp: str | None = None
    recipient_id: str | None = None
    recipient_user_id: str | None = None
    errors: list[WaError] = Field(default_factory=list)


class _Value(_Model):
    messaging_product: str | None = None
    metadata: _Metadata | None = None
    contacts: list[_Contact] = Field(default_factory=list)
    messages: list[_Message] = Field(default_factory=list)
    statuses: list[_Status] = Field(default_factory=list)
    errors: list[WaError] = Field(default_factory=list)


class _Change(_Model):
    field: str
    value: _Value


class _Entry(_Model):
    id: str
    changes: list[_Change] = Field(default_factory=list)


class Notification(_Model):
    """A webhook body: ``{"object": "whatsapp_business_account", "entry": [...]}``."""

    object: str
    entry: list[_Entry]


def parse_notification(body: bytes) -> Notification:
    """The validated notification; ValueError says why the body is not one.

    Parsed and validated in one pass from the raw bytes (pydantic-core reads the JSON
    itself: no intermediate Python objects, about half the time of ``json.loads`` then
    validating; this runs before every webhook's 200)."""
    try:
        note = Notification.model_validate_json(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["type"] == "json_invalid":
            raise ValueError(f"the body is not JSON ({first['msg'].removeprefix('Invalid JSON: ')})") from exc
        if first["type"] == "model_type" and not first["loc"]:
            raise ValueError(f"the body is JSON {type(first.get('input')).__name__}, not an object") from exc
        where = ".".join(str(p) for p in first["loc"])
        raise ValueError(f"unexpected shape at {where or 'the top'}: {first['msg']} "
                         f"({exc.error_count()} problem(s))") from exc
    if note.object != "whatsapp_business_account":
        raise ValueError(f"object is {note.object!r}, not 'whatsapp_business_account'")
    return note


class MessageType(StrEnum):
    """``messages[].type`` values Sabha knows."""

    TEXT = "text"
    INTERACTIVE = "interactive"
    BUTTON = "button"
    IMAGE = "image"
    VIDEO = "video"
    DOCUMENT = "document"
    STICKER = "sticker"
    LOCATION = "location"
    CONTACTS = "contacts"
    ORDER = "order"
    AUDIO = "audio"
    VOICE = "voice"
    REACTION = "reaction"
    UNSUPPORTED = "unsupported"
    SYSTEM = "system"


class Disposition(StrEnum):
    """What Sabha does with an inbound message."""

    BOARD = "board"  # its text goes to the board
    TEXT_ONLY = "text_only"  # one polite line that only text is understood (no model call)
    LOG = "log"  # logged, no reply


_TEXT_ONLY = {MessageType.IMAGE, MessageType.VIDEO, MessageType.DOCUMENT, MessageType.STICKER,
              MessageType.LOCATION, MessageType.CONTACTS, MessageType.ORDER, MessageType.AUDIO, MessageType.VOICE}


def disposition_of(kind: str, text: str | None) -> Disposition:
    """What to do with a message of ``kind`` whose readable text is ``text``."""
    if kind in (MessageType.TEXT, MessageType.INTERACTIVE, MessageType.BUTTON):
        return Disposition.BOARD if text is not None else Disposition.LOG
    if kind in _TEXT_ONLY:
        return Disposition.TEXT_ONLY
    return Disposition.LOG


def is_bsuid(user: str) -> bool:
    """True for a business-scoped user id (``US.1349...``), False for a phone number."""
    return "." in user


@dataclass(frozen=True)
class InboundMessage:
    """One ``messages[]`` item with its sender resolved."""

    phone_number_id: str | None
    wamid: str
    kind: str
    text: str | None
    user: str | None  # the phone number, else the business-scoped user id
    bsuid: str | None
    name: str | None
    disposition: Disposition
    errors: tuple[WaError, ...] = ()


@dataclass(frozen=True)
class StatusUpdate:
    """One ``statuses[]`` item: what happened to a message Sabha sent."""

    wamid: str
    status: str
    recipient: str | None
    errors: tuple[WaError, ...] = ()


@dataclass(frozen=True)
class ReportedError:
    """One ``value.errors[]`` item (a problem Meta reports outside any message)."""

    error: WaError


def _text_of(message: _Message) -> str | None:
    if message.type == MessageType.TEXT and message.text is not None:
        return message.text.body
    if message.type == MessageType.BUTTON and message.button is not None:
        return message.button.text or message.button.payload
    if message.type == MessageType.INTERACTIVE and message.interactive is not None:
        reply = message.interactive.button_reply or message.interactive.list_reply
        return reply.title if reply is not None else None
    return None


def read_items(note: Notification) -> Iterator[InboundMessage | StatusUpdate | ReportedError]:
    """Every message, status and error of every entry and change, in order."""
    for entry in note.entry:
        for change in entry.changes:
            value = change.value
            number_id = value.metadata.phone_number_id if value.metadata else None
            contacts = value.contacts
            for i, message in enumerate(value.messages):
                contact = _contact_for(contacts, message, i)
                phone = message.from_ or (contact.wa_id if contact else None)
                bsuid = message.from_user_id or (contact.user_id if contact else None)
                name = contact.profile.name if contact and contact.profile else None
                text = _text_of(message)
                yield InboundMessage(number_id, message.id, message.type, text, phone or bsuid, bsuid, name,
                                     disposition_of(message.type, text), tuple(message.errors))
            for status in value.statuses:
                yield StatusUpdate(status.id, status.status, status.recipient_id or status.recipient_user_id,
                                   tuple(status.errors))
            for error in value.errors:
                yield ReportedError(error)


def _contact_for(contacts: list[_Contact], message: _Message, index: int) -> _Contact | None:
    for contact in contacts:
        if (message.from_ and contact.wa_id == message.from_) or \
                (message.from_user_id and contact.user_id == message.from_user_id):
            return contact
    if len(contacts) == 1:
        return contacts[0]
    return contacts[index] if index < len(contacts) else None

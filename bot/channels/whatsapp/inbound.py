"""Webhook notifications from Meta: the signature, the payload's shape, and what each item is.

:func:`signature_problem` checks ``X-Hub-Signature-256`` (HMAC-SHA256 of the *raw* body
with the app secret, compared in constant time). :func:`parse_notification` validates a
body with pydantic before anything is written (a bad body is a :class:`ValueError` whose
text says what is wrong). One bad item does not sink a batch: when the whole body does not
validate, each entry, change and item is validated on its own, lone surrogates (``\ud800``,
which strict JSON parsers refuse) become U+FFFD, and an item that is still not what Meta
documents is left out and named in :attr:`Notification.skipped` (the channel logs it and
answers 200, whether the item was alone or in a batch); the rest is read as usual. What
carries a person's words is read leniently (an integer ``timestamp`` too).
:func:`read_items` walks every ``entry[].changes[].value`` and sorts
its ``messages[]``, ``statuses[]`` and ``errors[]`` into typed items with a
:class:`Disposition`: a message for the board (text, the text of an interactive or
template button reply, a WhatsApp Flow's answers (:func:`flow_answers`), and media: a
picture, sticker, video, document, audio or voice note,
a location, contact cards or an order, read by :mod:`.attachments` into attachments with
the caption, or an order's note, as text); a message only a fixed line answers (polls and every other type Cloud
API calls ``unsupported``, a message whose content Meta could not give, media without a
usable id, and any type Sabha does not know yet); an edit (a fixed line
saying edits are not read); or an event that is deliberately logged without a reply
(reactions, pins, deleted messages, a chat being opened, system notices, a reply to a
call-permission request).

A user is keyed on the phone number (``from`` / ``contacts[].wa_id``) when Meta sends it,
else on the business-scoped user id (``messages[].from_user_id`` / ``contacts[].user_id``),
the only id of a user who hides their number.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from board.envelope import clean_text
from board.media.attachment import Attachment
from bot.channels.whatsapp.attachments import attachments_of

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
    "flow_answers",
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


class _FlowReply(_Model):
    """A WhatsApp Flow's completion: the answers the person gave, as a JSON string."""

    response_json: str | None = None
    body: str | None = None
    name: str | None = None


class _CallPermission(_Model):
    response: str | None = None
    response_source: str | None = None


class _Interactive(_Model):
    type: str
    button_reply: _Reply | None = None
    list_reply: _Reply | None = None
    nfm_reply: _FlowReply | None = None
    call_permission_reply: _CallPermission | None = None


class _Context(_Model):
    id: str | None = None
    forwarded: bool | None = None


class _Unsupported(_Model):
    type: str | None = None


class _EditedContent(_Model):
    type: str | None = None
    text: _Text | None = None


class _Edit(_Model):
    original_message_id: str | None = None
    message: _EditedContent | None = None


class _Message(_Model):
    id: str = Field(min_length=1)
    from_: str | None = Field(None, alias="from")
    from_user_id: str | None = None
    group_id: str | None = None  # a message written in a WhatsApp group (Groups API)
    timestamp: str | int | None = None  # a string as documented; an integer is read as well
    type: str
    text: _Text | None = None
    button: _Button | None = None
    interactive: _Interactive | None = None
    context: _Context | None = None
    unsupported: _Unsupported | None = None
    edit: _Edit | None = None
    errors: list[WaError] = Field(default_factory=list)


class _Status(_Model):
    id: str = Field(min_length=1)
    status: str
    timestamp: str | int | None = None
    recipient_id: str | None = None
    recipient_user_id: str | None = None
    errors: list[WaError] = Field(default_factory=list)
    biz_opaque_callback_data: str | None = None


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
    _skipped: list[str] = PrivateAttr(default_factory=list)

    @property
    def skipped(self) -> list[str]:
        """The items left out because they are not what Meta documents (where, id, why)."""
        return self._skipped


def parse_notification(body: bytes) -> Notification:
    """The validated notification; ValueError says why the body is not one.

    Parsed and validated in one pass from the raw bytes (pydantic-core reads the JSON
    itself: no intermediate Python objects, about half the time of ``json.loads`` then
    validating; this runs before every webhook's 200). Only a body that fails that is read
    again item by item (:func:`_salvage`)."""
    try:
        note = Notification.model_validate_json(body)
    except ValidationError as exc:
        note = _salvage(body, exc)
    if note.object != "whatsapp_business_account":
        raise ValueError(f"object is {note.object!r}, not 'whatsapp_business_account'")
    return note


def _problem(exc: ValidationError, where: str = "") -> str:
    first = exc.errors()[0]
    loc = ".".join(p for p in (where, *(str(p) for p in first["loc"])) if p)
    return f"unexpected shape at {loc or 'the top'}: {first['msg']} ({exc.error_count()} problem(s))"


def _salvage(body: bytes, exc: ValidationError) -> Notification:
    """``body`` read leniently: lone surrogates repaired, then each entry, change and item
    validated on its own (a bad one is left out and named in ``skipped``, even when it was the
    only one: the same answer alone as in a batch). ValueError when it is not JSON or not a
    notification at all."""
    first = exc.errors()[0]
    try:
        data = _repaired(json.loads(body))
    except RecursionError:
        raise ValueError("the body is nested too deeply to be a notification") from None
    except ValueError:
        raise ValueError(f"the body is not JSON ({first['msg'].removeprefix('Invalid JSON: ')})") from exc
    if not isinstance(data, dict):
        raise ValueError(f"the body is JSON {type(data).__name__}, not an object") from exc
    try:
        return Notification.model_validate(data)  # only surrogates were wrong
    except ValidationError:
        pass
    entries = data.get("entry")
    try:
        note = Notification.model_validate({**data, "entry": []})
        if not isinstance(entries, list):
            Notification.model_validate(data)  # raises, naming what is wrong with entry
    except ValidationError as top:
        raise ValueError(_problem(top)) from None
    assert isinstance(entries, list)
    for i, raw in enumerate(entries):
        entry = _salvage_entry(raw, f"entry.{i}", note.skipped)
        if entry is not None:
            note.entry.append(entry)
    return note  # an item that is no message is skipped alone as in a batch: a 400 would be redelivered for days


_ITEMS: tuple[tuple[str, type[_Model]], ...] = (
    ("contacts", _Contact), ("messages", _Message), ("statuses", _Status), ("errors", WaError))


def _salvage_entry(raw: object, where: str, skipped: list[str]) -> _Entry | None:
    """One entry with the changes and items of it that validate; the rest named in ``skipped``."""
    if not isinstance(raw, dict):
        skipped.append(f"{where}: not an object")
        return None
    try:
        entry = _Entry.model_validate({**raw, "changes": []})
    except ValidationError as exc:
        skipped.append(_problem(exc, where))
        return None
    changes = raw.get("changes")
    for j, change in enumerate(changes if isinstance(changes, list) else []):
        here = f"{where}.changes.{j}"
        value = change.get("value") if isinstance(change, dict) else None
        if not isinstance(value, dict):
            skipped.append(f"{here}: no value object")
            continue
        try:
            bare = _Change.model_validate({**change, "value": {k: v for k, v in value.items()
                                                               if k not in dict(_ITEMS)}})
        except ValidationError as exc:
            skipped.append(_problem(exc, here))
            continue
        for key, model in _ITEMS:
            items = value.get(key)
            for k, item in enumerate(items if isinstance(items, list) else []):
                try:
                    getattr(bare.value, key).append(model.model_validate(item))
                except ValidationError as exc:
                    ident = item.get("id") if isinstance(item, dict) else None
                    named = f" (id {str(ident)[:80]})" if isinstance(ident, str | int) else ""
                    skipped.append(_problem(exc, f"{here}.value.{key}.{k}") + named)
                    unreadable = _unreadable(item) if model is _Message else None
                    if unreadable is not None:  # the person is told it could not be read, not left unanswered
                        bare.value.messages.append(unreadable)
        entry.changes.append(bare)
    return entry


def _unreadable(item: object) -> _Message | None:
    """A message item that does not validate, as far as it can be read: its id, sender (and group) and
    type, nothing else, so it gets the line that it could not be read (:attr:`Disposition.TEXT_ONLY`; an
    act such as a reaction stays silent); None when its id or sender cannot be read."""
    if not isinstance(item, dict):
        return None
    fields = {name: value for name in ("id", "from", "from_user_id", "group_id")
              if isinstance(value := item.get(name), str) and value}
    if "id" not in fields or not ("from" in fields or "from_user_id" in fields):
        return None
    kind = item.get("type")
    try:
        return _Message.model_validate({**fields, "type": kind if isinstance(kind, str) and kind else "unknown"})
    except ValidationError:
        return None


def _repaired(data: Any) -> Any:
    """``data`` (from ``json.loads``) with every lone surrogate in its strings made U+FFFD
    (iterative: the depth ``json.loads`` accepted must not overflow the stack here)."""
    if isinstance(data, str):
        return clean_text(data)
    stack: list[Any] = [data]
    while stack:
        node = stack.pop()
        pairs = list(node.items()) if isinstance(node, dict) else list(enumerate(node)) \
            if isinstance(node, list) else []
        for key, value in pairs:
            if isinstance(value, str):
                value = clean_text(value)
            elif isinstance(value, dict | list):
                stack.append(value)
            if isinstance(key, str) and clean_text(key) != key:
                del node[key]
                key = clean_text(key)
            node[key] = value
    return data


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
    EDIT = "edit"
    REVOKE = "revoke"
    REQUEST_WELCOME = "request_welcome"


class Disposition(StrEnum):
    """What Sabha does with an inbound message."""

    BOARD = "board"  # its text goes to the board
    TEXT_ONLY = "text_only"  # one polite line that only text is understood (no model call)
    EDITED = "edited"  # one line saying edits are not read (no model call)
    LOG = "log"  # deliberately no reply: logged


#: Deliberate silence: acts on earlier messages (a reaction, a pin, keep-in-chat, a deleted
#: message), a chat being opened, and system notices. Each is logged; none is a question.
_SILENT = {MessageType.REACTION, MessageType.SYSTEM, MessageType.REVOKE, MessageType.REQUEST_WELCOME}
_SILENT_UNSUPPORTED = {"reaction", "pin", "keep_in_chat"}  # ``unsupported.type`` values that are such acts


#: ``interactive.type`` values that are no question: a reply to Sabha's request to call (it makes no calls).
_SILENT_INTERACTIVE = {"call_permission_reply"}


def disposition_of(kind: str, text: str | None, unsupported: str | None = None, *,
                   attachments: bool = False, interactive: str | None = None) -> Disposition:
    """What to do with a message of ``kind`` whose readable text is ``text`` (``unsupported``:
    the ``unsupported.type`` Meta names for a type Cloud API does not support, e.g. ``poll_creation``;
    ``attachments``: media or a shared location, card or order was read from it; ``interactive``: the
    ``interactive.type`` of an interactive message).

    Every message a person wrote gets an answer: the board's, or a fixed line (also for a
    type Sabha does not know yet); only the acts in ``_SILENT`` get none."""
    if kind in (MessageType.TEXT, MessageType.INTERACTIVE, MessageType.BUTTON) and text is not None:
        return Disposition.BOARD
    if attachments and kind not in (MessageType.UNSUPPORTED, MessageType.EDIT) and kind not in _SILENT:
        return Disposition.BOARD
    if kind == MessageType.EDIT:
        return Disposition.EDITED
    if kind in _SILENT or (kind == MessageType.UNSUPPORTED and unsupported in _SILENT_UNSUPPORTED) \
            or (kind == MessageType.INTERACTIVE and interactive in _SILENT_INTERACTIVE):
        return Disposition.LOG
    return Disposition.TEXT_ONLY


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
    group_id: str | None = None  # written in this WhatsApp group
    quoted: str | None = None  # the message an answer quotes, when not this one (an edit's original)
    attachments: tuple[Attachment, ...] = ()  # media references, a location, cards, an order (:mod:`.attachments`)
    detail: str | None = None  # for a message that gets no reply: what it was (logged)


@dataclass(frozen=True)
class StatusUpdate:
    """One ``statuses[]`` item: what happened to a message Sabha sent."""

    wamid: str
    status: str
    recipient: str | None
    errors: tuple[WaError, ...] = ()
    callback: str | None = None  # ``biz_opaque_callback_data``: what Sabha sent with the message (a reply's key)


@dataclass(frozen=True)
class ReportedError:
    """One ``value.errors[]`` item (a problem Meta reports outside any message)."""

    error: WaError


def _text_of(message: _Message) -> str | None:
    """The text the board answers. A button's press is its text, except that a button whose id
    (an interactive reply button) or payload (a template's quick reply) is a ``/command`` is that
    command: Sabha's own buttons (:class:`board.envelope.Button`) send their command when pressed."""
    if message.type == MessageType.TEXT and message.text is not None:
        return message.text.body
    if message.type == MessageType.BUTTON and message.button is not None:
        if (message.button.payload or "").startswith("/"):
            return message.button.payload
        return message.button.text or message.button.payload
    if message.type == MessageType.INTERACTIVE and message.interactive is not None:
        if message.interactive.nfm_reply is not None:
            return flow_answers(message.interactive.nfm_reply)
        reply = message.interactive.button_reply or message.interactive.list_reply
        if reply is not None and (reply.id or "").startswith("/"):
            return reply.id
        return reply.title if reply is not None else None
    return None


_FLOW_MAX = 4000  # characters of a form's answers passed on


def _one_line(text: str) -> str:
    """``text`` with its line breaks (any of them: \\r, \\n, U+2028 ...) made spaces."""
    return " ".join(text.splitlines())


def flow_answers(reply: _FlowReply) -> str:
    """A WhatsApp Flow's completion as the person's words: one ``field: answer`` line per answer
    (``flow_token``, Meta's bookkeeping, left out), under a line saying it is a form's answers. A line
    break inside a field's name or answer becomes a space: no answer starts a line of its own."""
    name = f" {reply.name!r}" if reply.name and reply.name != "flow" else ""
    head = f"(answers to the WhatsApp form{name} I filled in)"
    try:
        data = json.loads(reply.response_json or "")
    except (ValueError, RecursionError):
        data = reply.response_json
    if isinstance(data, dict):
        lines = [f"{_one_line(k)}: {_one_line(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))}"
                 for k, v in data.items() if k != "flow_token"]
    else:
        lines = [_one_line(str(data or reply.body or "(no answers)"))]
    text = "\n".join([head, *lines])
    return clean_text(text if len(text) <= _FLOW_MAX else text[: _FLOW_MAX - 1] + "\u2026")


def _detail(message: _Message) -> str | None:
    """What a message that gets no reply was, for the log (a call-permission reply: its response)."""
    permission = message.interactive.call_permission_reply if message.interactive is not None else None
    if permission is None:
        return None
    return (f"call permission reply: {permission.response or '?'} ({permission.response_source or 'no source'}); "
            "Sabha makes no calls, nothing to answer")


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
                attachments, caption = attachments_of(message.type, message.model_extra or {})
                if attachments:
                    text = clean_text(caption) if caption else ""
                subtype = message.unsupported.type if message.unsupported else None
                original = message.edit.original_message_id if message.edit else None
                what = message.interactive.type if message.interactive else None
                yield InboundMessage(number_id, message.id, message.type, text, phone or bsuid, bsuid, name,
                                     disposition_of(message.type, text, subtype, attachments=bool(attachments),
                                                    interactive=what),
                                     tuple(message.errors), message.group_id, original, attachments, _detail(message))
            for status in value.statuses:
                yield StatusUpdate(status.id, status.status, status.recipient_id or status.recipient_user_id,
                                   tuple(status.errors), status.biz_opaque_callback_data)
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

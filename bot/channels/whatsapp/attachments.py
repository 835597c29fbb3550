"""What a WhatsApp message carries besides text, as :class:`board.media.attachment.Attachment` records.

Read from the ``messages[]`` item's own object (Meta's documented shapes; see pywa's update
fixtures): ``image``, ``sticker`` (static or animated WebP: a picture the core reads as one), ``video``,
``document`` (with its ``filename``) and ``audio`` (``voice: true`` is a voice note) become a
*reference* (``MediaRef(channel="whatsapp", id=<media id>)``, the declared ``mime_type`` and
``sha256``): nothing is downloaded at receipt; the bytes are fetched in the conversation's
lane (:mod:`.media`). The ``caption`` Meta sends with a picture, a video or a document is the
message's text, and so is the note written with an order (whole: the person's own words).
``location``, ``contacts`` and ``order`` carry no file: they become an
attachment whose ``derived`` text says what was shared ("shared a location: lat, lon, name,
address"), which the media service quotes as data for the model.

The webhook's ``sha256`` is base64 (``"m04pFf2E...SDI="``); it is kept as hex (what the blob
store checks), and a value that is not a SHA-256 at all is dropped (not checked) rather than
making every download fail. Every outside string is cut to a sane length here; the media
service quotes it before a model reads it.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from board.media.attachment import Attachment, MediaKind, MediaRef

__all__ = ["CHANNEL", "attachments_of", "normalized_sha256"]

CHANNEL = "whatsapp"
_FIELD = 300  # characters of one outside value kept (a name, an address, a product id)
_MANY = 50  # contact cards / order items listed at most
_HEX64 = re.compile(r"[0-9a-fA-F]{64}")

#: The message types whose content is a file, and what each is.
_FILE_KINDS = {"image": MediaKind.IMAGE, "sticker": MediaKind.STICKER, "video": MediaKind.VIDEO,
               "document": MediaKind.DOCUMENT, "audio": MediaKind.AUDIO, "voice": MediaKind.VOICE}


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow")


class _Media(_Model):
    id: str = Field(min_length=1, max_length=200)
    mime_type: str | None = Field(None, max_length=200)
    sha256: str | None = None
    caption: str | None = None
    filename: str | None = None
    voice: bool | None = None
    animated: bool | None = None


class _Location(_Model):
    latitude: float
    longitude: float
    name: str | None = None
    address: str | None = None
    url: str | None = None


class _Item(_Model):
    product_retailer_id: str | None = None
    quantity: float | None = None
    item_price: float | None = None
    currency: str | None = None


class _Order(_Model):
    catalog_id: str | None = None
    text: str | None = None
    product_items: list[_Item] = Field(default_factory=list)


def normalized_sha256(value: str | None) -> str | None:
    """``value`` (hex, or base64 as webhooks write it) as lowercase hex; None when it is no SHA-256."""
    if not value:
        return None
    value = value.strip()
    if _HEX64.fullmatch(value):
        return value.lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw.hex() if len(raw) == 32 else None


def attachments_of(kind: str, item: dict[str, Any]) -> tuple[tuple[Attachment, ...], str | None]:
    """(attachments, caption) of a message of ``kind`` whose extra fields are ``item``; nothing
    when the content is not what Meta documents (the message then gets the "text only" line)."""
    try:
        if kind in _FILE_KINDS:
            media = _Media.model_validate(item.get(kind))
            return (_file(kind, media),), media.caption
        if kind == "location":
            return (_location(_Location.model_validate(item.get("location"))),), None
        if kind == "contacts":
            cards = item.get("contacts")
            derived = _contacts(cards) if isinstance(cards, list) else None
            return ((Attachment(kind=MediaKind.CONTACTS, derived=derived),) if derived else ()), None
        if kind == "order":
            order = _Order.model_validate(item.get("order"))
            return (_order(order),), order.text  # the note the person wrote with it: their words, whole
    except ValidationError:
        pass
    return (), None


def _file(kind: str, media: _Media) -> Attachment:
    what = _FILE_KINDS[kind]
    if what is MediaKind.AUDIO and media.voice:
        what = MediaKind.VOICE
    name = _cut(media.filename) if kind == "document" and media.filename else None
    return Attachment(kind=what, mime=media.mime_type, name=name, sha256=normalized_sha256(media.sha256),
                      source=MediaRef(channel=CHANNEL, id=media.id))


def _location(place: _Location) -> Attachment:
    parts = [f"{place.latitude}, {place.longitude}", *(_cut(p) for p in (place.name, place.address, place.url) if p)]
    return Attachment(kind=MediaKind.LOCATION, derived="shared a location: " + ", ".join(parts))


def _contacts(cards: list[Any]) -> str | None:
    lines = [line for card in cards[:_MANY] if isinstance(card, dict) and (line := _card(card))]
    if not lines:
        return None
    more = f"\n(and {len(cards) - _MANY} more)" if len(cards) > _MANY else ""
    head = "shared a contact card:" if len(lines) == 1 else f"shared {len(lines)} contact cards:"
    return "\n".join([head, *lines]) + more


def _card(card: dict[str, Any]) -> str:
    name = _dict(card.get("name"))
    who = _text(name.get("formatted_name")) or " ".join(
        t for t in (_text(name.get("first_name")), _text(name.get("last_name"))) if t) or "(no name)"
    details: list[str] = []
    for phone in _dicts(card.get("phones")):
        if number := _text(phone.get("phone")) or _text(phone.get("wa_id")):
            kind = _text(phone.get("type"))
            details.append(f"phone {number}" + (f" ({kind})" if kind else ""))
    details += [f"email {e}" for mail in _dicts(card.get("emails")) if (e := _text(mail.get("email")))]
    org = _dict(card.get("org"))
    if company := ", ".join(t for t in (_text(org.get(k)) for k in ("company", "department", "title")) if t):
        details.append(company)
    return f"{_cut(who)}: " + "; ".join(details) if details else _cut(who)


def _order(order: _Order) -> Attachment:
    items = []
    for item in order.product_items[:_MANY]:
        quantity = f"{item.quantity:g}" if item.quantity is not None else "?"
        price = f" at {item.item_price:g} {_cut(item.currency or '')}".rstrip() if item.item_price is not None else ""
        items.append(f"{quantity} x {_cut(item.product_retailer_id or '(unnamed product)')}{price}")
    catalog = f" from catalog {_cut(order.catalog_id)}" if order.catalog_id else ""
    derived = f"placed an order{catalog}: " + ("; ".join(items) or "no items")
    if len(order.product_items) > _MANY:
        derived += f"; and {len(order.product_items) - _MANY} more items"
    return Attachment(kind=MediaKind.ORDER, derived=derived)


def _cut(value: str | None) -> str:
    text = " ".join((value or "").split())
    return text if len(text) <= _FIELD else text[: _FIELD - 1] + "\u2026"


def _text(value: object) -> str:
    return _cut(str(value)) if isinstance(value, str | int | float) and not isinstance(value, bool) else ""


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _dicts(value: object) -> list[dict[str, Any]]:
    return [v for v in value[:_MANY] if isinstance(v, dict)] if isinstance(value, list) else []

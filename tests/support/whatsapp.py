"""Helpers for the WhatsApp tests: settings pointed at the fake Graph API, webhook payloads in
Meta's documented shapes (as in the Cloud API webhook reference and pywa's update fixtures),
signing, and posting them to a running webhook."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
from typing import Any

from aiohttp import ClientSession

from bot.channels.whatsapp.config import WhatsAppSection
from bot.channels.whatsapp.outbound import Pacing
from tests.support.fakes.graph_api import FakeGraphAPI

APP_SECRET = "test-app-secret"
VERIFY_TOKEN = "verify-me-please"
NUMBER_ID = "106540352242922"
DISPLAY_NUMBER = "15550009999"
OWNER = "15550001111"
FRIEND = "15550002222"
STRANGER = "15550006666"
BSUID_FRIEND = "US.13491208655302741918"  # a user who hides their number: only a business-scoped id
FAST = Pacing(channel_limit_s=0.05, pair_limit_s=0.05, transient_s=0.02, max_retries=4, timeout_s=10)

_ids = itertools.count(1)


def wa_settings(fake: FakeGraphAPI, **overrides: Any) -> WhatsAppSection:
    """A whatsapp section for the fake (owner, friend and the BSUID friend allowed)."""
    data: dict[str, Any] = {
        "phone_number_id": NUMBER_ID, "access_token": fake.token, "app_secret": APP_SECRET,
        "verify_token": VERIFY_TOKEN, "graph_base_url": fake.base_url, "api_version": fake.version,
        "allowed_numbers": [OWNER, FRIEND, BSUID_FRIEND],
    }
    data.update(overrides)
    return WhatsAppSection.model_validate(data)


def new_wamid() -> str:
    """A fresh inbound message id."""
    return f"wamid.HBgLMTU1NTAwMDExMTEVAgASGBQz{next(_ids):08d}AA=="


def sign(body: bytes, secret: str = APP_SECRET) -> str:
    """``X-Hub-Signature-256`` for ``body``."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def contact(user: str, name: str = "Test User", *, bsuid: str | None = None) -> dict[str, Any]:
    """A ``contacts[]`` item: ``wa_id`` for a phone number, ``user_id`` for a business-scoped id."""
    if "." in user:
        return {"profile": {"name": name}, "user_id": user}
    item: dict[str, Any] = {"profile": {"name": name}, "wa_id": user}
    if bsuid:
        item["user_id"] = bsuid
    return item


def message(user: str, kind: str = "text", *, text: str = "hello", wamid: str | None = None,
            **fields: Any) -> dict[str, Any]:
    """A ``messages[]`` item from ``user`` (``from`` for a phone number, ``from_user_id`` for a BSUID)."""
    item: dict[str, Any] = {"id": wamid or new_wamid(), "timestamp": "1763840000", "type": kind}
    if "." in user:
        item["from_user_id"] = user
    else:
        item["from"] = user
    if kind == "text":
        item["text"] = {"body": text}
    item.update(fields)
    return item


#: One example of each non-text type, as Meta writes them.
MEDIA: dict[str, dict[str, Any]] = {
    "image": {"image": {"mime_type": "image/jpeg", "sha256": "4654+8g=", "id": "65463453", "caption": "look"}},
    "video": {"video": {"mime_type": "video/mp4", "sha256": "Jh+2ij6=", "id": "765756756"}},
    "document": {"document": {"filename": "plan.pdf", "mime_type": "application/pdf", "sha256": "grw=",
                              "id": "1234567890"}},
    "sticker": {"sticker": {"mime_type": "image/webp", "sha256": "OmT4=", "id": "1234", "animated": False}},
    "location": {"location": {"latitude": 37.4611978, "longitude": -122.2164385, "name": "HQ"}},
    "contacts": {"contacts": [{"name": {"first_name": "Chandler", "formatted_name": "Chandler Bing"},
                               "phones": [{"phone": "+1 555-555-5555", "wa_id": "15555555555", "type": "CELL"}]}]},
    "order": {"order": {"catalog_id": "354160437058781", "text": "",
                        "product_items": [{"product_retailer_id": "SODA", "quantity": 2, "item_price": 10,
                                           "currency": "USD"}]}},
    "audio": {"audio": {"mime_type": "audio/ogg; codecs=opus", "sha256": "m04=", "id": "9876", "voice": True}},
}


def button_reply(user: str, title: str) -> dict[str, Any]:
    """An interactive reply button press."""
    return message(user, "interactive", interactive={"type": "button_reply",
                                                      "button_reply": {"id": "b1", "title": title}},
                   context={"from": DISPLAY_NUMBER, "id": "wamid.Q1"})


def list_reply(user: str, title: str) -> dict[str, Any]:
    """An interactive list choice."""
    return message(user, "interactive", interactive={"type": "list_reply",
                                                      "list_reply": {"id": "r1", "title": title,
                                                                     "description": "a row"}})


def template_button(user: str, text: str) -> dict[str, Any]:
    """A quick-reply button of a template message."""
    return message(user, "button", button={"text": text, "payload": text.upper()},
                   context={"from": DISPLAY_NUMBER, "id": "wamid.T1"})


def status(wamid: str, state: str, user: str, *, error: int | None = None, title: str | None = None
           ) -> dict[str, Any]:
    """A ``statuses[]`` item."""
    item: dict[str, Any] = {"id": wamid, "status": state, "timestamp": "1763840001", "recipient_id": user}
    if error is not None:
        item["errors"] = [{"code": error, "title": title or "error", "message": title or "error",
                           "error_data": {"details": title or "error"}}]
    else:
        item["conversation"] = {"id": "7270432eae", "origin": {"type": "service"}}
        item["pricing"] = {"billable": True, "pricing_model": "PMP", "category": "service"}
    return item


def notification(messages: list[dict[str, Any]] = (), contacts: list[dict[str, Any]] | None = None,  # type: ignore[assignment]
                 statuses: list[dict[str, Any]] = (), errors: list[dict[str, Any]] = ()  # type: ignore[assignment]
                 ) -> dict[str, Any]:
    """A webhook body with one entry and one change holding these items."""
    value: dict[str, Any] = {"messaging_product": "whatsapp",
                             "metadata": {"display_phone_number": DISPLAY_NUMBER, "phone_number_id": NUMBER_ID}}
    if messages:
        if contacts is None:
            seen: dict[str, dict[str, Any]] = {}
            for m in messages:
                user = m.get("from") or m.get("from_user_id")
                seen.setdefault(user, contact(user))
            contacts = list(seen.values())
        value["contacts"] = contacts
        value["messages"] = list(messages)
    if statuses:
        value["statuses"] = list(statuses)
    if errors:
        value["errors"] = list(errors)
    return {"object": "whatsapp_business_account",
            "entry": [{"id": "102290129340398", "changes": [{"value": value, "field": "messages"}]}]}


def text_notification(user: str, text: str, wamid: str | None = None) -> dict[str, Any]:
    """One text message."""
    return notification([message(user, text=text, wamid=wamid)])


async def post(http: ClientSession, url: str, body: dict[str, Any] | bytes, *, signature: str | None = "auto"
               ) -> tuple[int, str]:
    """POST a notification (signed unless ``signature`` is None or given); (status, text)."""
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if signature == "auto":
        headers["X-Hub-Signature-256"] = sign(raw)
    elif signature is not None:
        headers["X-Hub-Signature-256"] = signature
    async with http.post(url, data=raw, headers=headers) as resp:
        return resp.status, await resp.text()

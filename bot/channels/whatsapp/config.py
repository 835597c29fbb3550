"""``whatsapp:``, the WhatsApp channel's config section (validated by pydantic).

The channel runs when ``phone_number_id`` is set; then ``access_token``, ``app_secret``
and ``verify_token`` must be set too, or loading the config fails naming the key and the
variable to export (never a crash at the first request).
"""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import Field, SecretStr, field_serializer, field_validator, model_validator

from bot.config.base import StrictModel, base_url, blank_is_unset, section

__all__ = ["GRAPH_API", "GRAPH_API_VERSION", "AccessMode", "TemplateRef", "TemplatesSection", "WhatsAppSection",
           "normalise_user"]

GRAPH_API = "https://graph.facebook.com"
GRAPH_API_VERSION = "v23.0"  # the one place to change the Graph API version Sabha speaks

_BSUID = re.compile(r"^[A-Z]{2}\.(?:ENT\.)?[A-Za-z0-9]{1,128}$")
_VERSION = re.compile(r"^v\d+\.\d+$")


class AccessMode(StrEnum):
    """Who may talk to the board on WhatsApp."""

    ALLOWLIST = "allowlist"  # only ``allowed_numbers``
    PUBLIC = "public"  # anyone, within a per-sender rate and a daily cost cap


def normalise_user(value: str) -> str:
    """A phone number as WhatsApp writes it (digits only: ``+1 555-000 1111`` -> ``15550001111``),
    or a business-scoped user id as it is (``US.13491208655302741918``); ValueError otherwise."""
    text = str(value).strip()
    if _BSUID.match(text):
        return text
    digits = re.sub(r"[\s().+-]", "", text)
    if digits.isdigit() and 6 <= len(digits) <= 20:
        return digits
    raise ValueError(f"{value!r} is neither a phone number (digits with the country code, e.g. 15550001111) "
                     "nor a business-scoped user id (e.g. US.13491208655302741918)")


class TemplateRef(StrictModel):
    """An approved message template: its name and language code (WhatsApp Manager > Message templates).
    Its body has one variable, ``{{1}}``, which Sabha fills with what it has to say."""

    name: str = Field(min_length=1, max_length=512, description="the template's name, e.g. sabha_reminder")
    language: str = Field("en_US", min_length=2, max_length=15, description="its language code, e.g. en_US")

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not re.fullmatch(r"[a-z0-9_]+", value.strip()):
            raise ValueError(f"{value!r} is not a template name (lowercase letters, digits and _)")
        return value.strip()


class TemplatesSection(StrictModel):
    """``whatsapp.templates``: templates Sabha sends when the 24-hour window is closed."""

    reminder: TemplateRef | None = Field(None, description="a reminder of an action item (or any scheduled "
                                                           "message) to a user who has not written for 24 h; "
                                                           "unset: it waits for their next message")


class WhatsAppSection(StrictModel):
    """``whatsapp``: a WhatsApp Business number on Meta's Cloud API (runs when ``phone_number_id`` is set)."""

    phone_number_id: str | None = Field(None, description="the business number's id (WhatsApp > API Setup)")
    access_token: SecretStr | None = Field(None, description="a system user token; write ${WHATSAPP_ACCESS_TOKEN}")
    app_secret: SecretStr | None = Field(None, description="the Meta app's secret (signs webhooks); "
                                                           "write ${WHATSAPP_APP_SECRET}")
    verify_token: SecretStr | None = Field(None, description="any string; the same one in the app's webhook setup")
    graph_base_url: str = Field(GRAPH_API, description="Graph API endpoint; a local server in tests")
    api_version: str = Field(GRAPH_API_VERSION, description="Graph API version, e.g. v23.0")
    webhook_path: str = Field("/whatsapp/webhook", description="route on the server section's host/port")
    access: AccessMode = AccessMode.ALLOWLIST
    allowed_numbers: list[str] = Field(default_factory=list,
                                       description="phone numbers (15550001111) and/or business-scoped user ids; "
                                                   "the first is the owner")
    allowed_groups: list[str] = Field(default_factory=list,
                                      description="WhatsApp group ids (Groups API) the board answers in; "
                                                  "messages in any other group are ignored")
    public_rate_per_minute: float = Field(6.0, gt=0, le=600, description="public mode: messages a minute per sender")
    public_daily_usd: float = Field(5.0, ge=0, description="public mode: what strangers' model calls may cost "
                                                           "a day (UTC), all of them together")
    public_meetings: bool = Field(False, description="public mode: strangers may convene board meetings (their "
                                                     "calls count against public_daily_usd)")
    templates: TemplatesSection = section()

    _blank_is_unset = blank_is_unset("phone_number_id", "access_token", "app_secret", "verify_token")

    @field_serializer("access")
    def _access_text(self, value: AccessMode) -> str:
        return value.value  # dumps (``sabha config``) write plain YAML

    @field_validator("phone_number_id")
    @classmethod
    def _number_id(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = str(value).strip()
        if not value.isdigit():
            raise ValueError("must be the numeric phone number id from WhatsApp > API Setup (not the phone number)")
        return value

    @field_validator("graph_base_url")
    @classmethod
    def _base(cls, value: str) -> str:
        return base_url(value, "https://graph.facebook.com")

    @field_validator("api_version")
    @classmethod
    def _version(cls, value: str) -> str:
        if not _VERSION.match(value.strip()):
            raise ValueError("must look like v23.0")
        return value.strip()

    @field_validator("webhook_path")
    @classmethod
    def _path(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError("must start with / (e.g. /whatsapp/webhook)")
        return value

    @field_validator("allowed_numbers", mode="before")
    @classmethod
    def _numbers(cls, value: object) -> object:
        if isinstance(value, list):
            return [normalise_user(str(v)) for v in value]
        return value

    @field_validator("allowed_groups", mode="before")
    @classmethod
    def _groups(cls, value: object) -> object:
        if isinstance(value, list):
            groups = [str(v).strip() for v in value]
            bad = [g for g in groups if not g or g.isdigit() or "." in g or not g.isascii() or " " in g]
            if bad:
                raise ValueError(f"{bad[0]!r} is not a group id (the id the Groups API gives a group, e.g. "
                                 "Y2FwaV9ncm91cDoxNzA1NTU1MDEzOToxMjAzNjM0MDQ2OTQyMzM4MjAZD)")
            return groups
        return value

    @model_validator(mode="after")
    def _secrets(self) -> WhatsAppSection:
        if self.phone_number_id is None:
            return self
        missing = [f"{key} (export {env})" for key, env in (("access_token", "WHATSAPP_ACCESS_TOKEN"),
                                                          ("app_secret", "WHATSAPP_APP_SECRET"),
                                                          ("verify_token", "WHATSAPP_VERIFY_TOKEN"))
                   if not _set(getattr(self, key))]
        if missing:
            raise ValueError("phone_number_id is set, so the channel runs, but these are not set: "
                             + ", ".join(missing))
        return self

    @property
    def enabled(self) -> bool:
        """True when a phone number id is set."""
        return self.phone_number_id is not None

    @property
    def messages_url(self) -> str:
        """``POST`` here to send."""
        return f"{self.graph_base_url}/{self.api_version}/{self.phone_number_id}/messages"


def _set(secret: SecretStr | None) -> bool:
    return secret is not None and bool(secret.get_secret_value().strip())

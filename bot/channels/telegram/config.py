"""``telegram:``, the Telegram channel's config section (validated by pydantic, no PTB import)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from board.roles import GENERAL, is_role_slug
from bot.config.base import StrictModel, base_url, blank_is_unset

__all__ = ["TELEGRAM_API", "TelegramRateSection", "TelegramSection"]

_SECRET_TOKEN = re.compile(r"^[A-Za-z0-9_-]{1,256}$")
TELEGRAM_API = "https://api.telegram.org/bot"


class TelegramRateSection(StrictModel):
    """``telegram.rate_limit``: outbound budgets (Telegram's own limits by default)."""

    group_per_minute: float = Field(20.0, gt=0, le=6000,
                                    description="messages a minute into one group, all topics together")
    private_per_second: float = Field(1.0, gt=0, le=100)
    global_per_second: float = Field(30.0, gt=0, le=1000)
    max_retries: int = Field(3, ge=0, le=10, description="resends after a 429 retry_after or a network error")


class TelegramSection(StrictModel):
    """``telegram``: the Telegram bot (runs when ``token`` is set)."""

    token: SecretStr | None = Field(None, description="from @BotFather; write ${TELEGRAM_BOT_TOKEN}")
    api_base_url: str = Field(TELEGRAM_API, description="Bot API endpoint; a local Bot API server or a test server")
    group_id: int | None = Field(None, description="the forum supergroup, e.g. -1001234567890")
    topics: dict[str, int] = Field(default_factory=dict, description="role -> message_thread_id; wins over the db")
    auto_create_topics: bool = True
    allowed_user_ids: list[int] = Field(default_factory=list, description="the first one is the owner")
    allowed_chat_ids: list[int] = Field(default_factory=list, description="other groups the board answers in")
    album_wait_s: float = Field(1.0, gt=0, le=60, description=(
        "an album (photos sent together) is answered as one message once no item of it came for this long "
        "(Telegram sends an album's items within moments)"))
    reply_unauthorised: bool = Field(True, description="tell unknown users in DMs that they are not authorised")
    resume_max_age_s: float | None = Field(None, exclude=True, description="moved to inbox.resume_max_age_s")
    mode: Literal["polling", "webhook"] = "polling"
    webhook_path: str = Field("/telegram/webhook", description="route on the server section's host/port")
    webhook_url: str | None = Field(None,
                                    description="public https URL of webhook_path; Sabha calls setWebhook with it")
    webhook_secret: SecretStr | None = Field(None, description="checked against X-Telegram-Bot-Api-Secret-Token")
    rate_limit: TelegramRateSection = Field(default_factory=TelegramRateSection)
    stream: bool = Field(True, description="show an answer while it is written, edited into one message "
                                           "(when the model's provider streams: llm.providers.<p>.stream)")
    stream_edit_interval_s: float = Field(1.5, ge=1.0, le=60,
                                          description="at least this long between two edits of a streamed answer")
    typing_after_s: float = Field(1.0, ge=0, le=30, description=(
        "typing… shows once an answer has taken this long (Telegram recommends the indicator only for an answer "
        "that takes a noticeable time); 0 shows it at once"))

    _blank_is_unset = blank_is_unset("token", "webhook_secret", "webhook_url")

    @field_validator("resume_max_age_s")
    @classmethod
    def _moved(cls, value: float | None) -> None:
        if value is not None:
            raise ValueError("telegram.resume_max_age_s moved to inbox.resume_max_age_s (it applies to every "
                             "channel now): move the line there")
        return None

    @field_validator("api_base_url")
    @classmethod
    def _api_base(cls, value: str) -> str:
        value = base_url(value, "https://api.telegram.org/bot")
        if "{token}" not in value and not value.endswith("/bot"):
            value += "/bot"  # PTB appends the token: https://host/bot<token>/<method>
        return value

    @field_validator("topics")
    @classmethod
    def _topic_roles(cls, value: dict[str, int]) -> dict[str, int]:
        for role, thread in value.items():
            if not is_role_slug(role):
                raise ValueError(f"{role!r} is not a role slug (lowercase letters, digits, - or _)")
            if role == GENERAL:
                raise ValueError("general lives in the forum's General topic; remove it from telegram.topics")
            if thread <= 1:
                raise ValueError(f"topic id {thread} of {role} is not a topic (General has none; ids are > 1)")
        return value

    @field_validator("webhook_path")
    @classmethod
    def _path(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError("must start with / (e.g. /telegram/webhook)")
        return value

    @model_validator(mode="after")
    def _webhook(self) -> TelegramSection:
        if self.mode == "webhook":
            secret = self.webhook_secret.get_secret_value() if self.webhook_secret else ""
            if not _SECRET_TOKEN.match(secret):
                raise ValueError("webhook mode needs webhook_secret: 1-256 characters of A-Z, a-z, 0-9, _ and -")
        return self

    @property
    def enabled(self) -> bool:
        """True when a token is set."""
        return self.token is not None and bool(self.token.get_secret_value().strip())

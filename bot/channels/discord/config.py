"""``discord:``, the Discord channel's config section (validated by pydantic).

The channel runs when ``token`` is set; then ``application_id`` must be set too (slash commands and
the invite URL need it), or loading the config fails naming the key.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, SecretStr, field_serializer, field_validator, model_validator

from bot.config.base import StrictModel, base_url, blank_is_unset

__all__ = ["DISCORD_API", "DiscordAccess", "DiscordSection"]

DISCORD_API = "https://discord.com/api/v10"


class DiscordAccess(StrEnum):
    """Who may talk to the board on Discord."""

    ALLOWLIST = "allowlist"  # only ``allowed_user_ids``
    PUBLIC = "public"  # anyone in the server, within a per-sender rate and a daily cost cap


class DiscordSection(StrictModel):
    """``discord``: a Discord bot in one server (runs when ``token`` is set)."""

    token: SecretStr | None = Field(None, description="the bot's token (Developer Portal > Bot); "
                                                      "write ${DISCORD_BOT_TOKEN}")
    application_id: str | None = Field(None, description="the application's id (General Information)")
    api_base_url: str = Field(DISCORD_API, description="Discord's REST endpoint; a local server in tests "
                                                       "(the gateway's address is asked of it)")
    guild_id: str | None = Field(None, description="the server (guild) the board sits in; messages from any "
                                                   "other server are ignored")
    access: DiscordAccess = DiscordAccess.ALLOWLIST
    allowed_user_ids: list[str] = Field(default_factory=list, description="Discord user ids (snowflakes) who may "
                                                                          "talk to the board; the first is the owner")

    _blank_is_unset = blank_is_unset("token", "application_id")

    @field_serializer("access")
    def _enum_text(self, value: StrEnum) -> str:
        return value.value

    @field_validator("api_base_url")
    @classmethod
    def _base(cls, value: str) -> str:
        return base_url(value, DISCORD_API)

    @field_validator("application_id", "guild_id")
    @classmethod
    def _snowflake(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = str(value).strip()
        if not value.isdigit():
            raise ValueError("must be a numeric Discord id (Developer Mode > Copy ID)")
        return value

    @field_validator("allowed_user_ids", mode="before")
    @classmethod
    def _users(cls, value: object) -> object:
        if isinstance(value, list):
            ids = [str(v).strip() for v in value]
            bad = [i for i in ids if not i.isdigit()]
            if bad:
                raise ValueError(f"{bad[0]!r} is not a Discord user id (a number; Developer Mode > Copy User ID)")
            return ids
        return value

    @model_validator(mode="after")
    def _needs_application(self) -> DiscordSection:
        if self.token is not None and self.application_id is None:
            raise ValueError("token is set, so the channel runs, but application_id is not set "
                             "(Developer Portal > General Information > Application ID)")
        return self

    @property
    def enabled(self) -> bool:
        """True when a bot token is set."""
        return self.token is not None

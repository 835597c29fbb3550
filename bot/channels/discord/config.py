"""``discord:``, the Discord channel's config section (validated by pydantic).

The channel runs when ``token`` is set; then ``application_id`` must be set too (slash commands and
the invite URL need it), or loading the config fails naming the key. Where the board sits: text
channels per advisor (``channels``: role -> channel id), one ``board_channel`` where messages are
addressed by name, a ``forum_channel`` whose posts are conversations, and DMs with the bot (always).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, SecretStr, field_serializer, field_validator, model_validator

from bot.config.base import StrictModel, base_url, blank_is_unset

__all__ = ["DISCORD_API", "DM_PREFIX", "DiscordAccess", "DiscordSection"]

DISCORD_API = "https://discord.com/api/v10"
#: A direct message's chat id is ``dm-<user id>`` (the user's, as Telegram's private chats are), so the owner's
#: place is known from the config alone (:meth:`bot.config.sections.Config.owner_chats`).
DM_PREFIX = "dm-"


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

    channels: dict[str, str] = Field(default_factory=dict,
                                     description="role -> text channel id: a channel per advisor (a message "
                                                 "there goes to that role; its answer starts a thread)")
    board_channel: str | None = Field(None, description="one text channel for the whole board: `@finance ...` "
                                                        "or plain words address an advisor; each question's "
                                                        "answer starts a thread")
    forum_channel: str | None = Field(None, description="a forum channel whose posts are conversations (the "
                                                        "board answers in the post)")
    catch_up_hours: float = Field(24.0, ge=0, le=24 * 14,
                                  description="after a restart, messages sent while Sabha was down are read "
                                              "from each channel's history and answered when at most this "
                                              "old; older ones are logged and left (0: none)")
    stream: bool = Field(True, description="show answers while they are written (one message, edited)")
    stream_edit_interval_s: float = Field(1.0, ge=1.0, le=30.0,
                                          description="at least this long between two edits of a streamed "
                                                      "answer (Discord allows about 5 edits per 5 s)")
    public_rate_per_minute: float = Field(6.0, gt=0, le=600, description="public mode: messages a minute per "
                                                                         "sender")
    public_daily_usd: float = Field(5.0, ge=0, description="public mode: what strangers' model calls may cost "
                                                           "a day (UTC), all of them together")

    _blank_is_unset = blank_is_unset("token", "application_id")

    @field_serializer("access")
    def _enum_text(self, value: StrEnum) -> str:
        return value.value

    @field_validator("api_base_url")
    @classmethod
    def _base(cls, value: str) -> str:
        return base_url(value, DISCORD_API)

    @field_validator("application_id", "guild_id", "board_channel", "forum_channel", mode="before")
    @classmethod
    def _snowflake(cls, value: str | None) -> str | None:
        if value is None or not str(value).strip():
            return None  # unset (an unset ${VAR} is blank)
        value = str(value).strip()
        if not value.isdigit():
            raise ValueError("must be a numeric Discord id (Developer Mode > Copy ID)")
        return value

    @field_validator("channels", mode="before")
    @classmethod
    def _channels(cls, value: object) -> object:
        if isinstance(value, dict):
            out: dict[str, str] = {}
            for role, channel in value.items():
                text = str(channel).strip()
                if not text.isdigit():
                    raise ValueError(f"{role}: {channel!r} is not a Discord channel id (Developer Mode > "
                                     f"Copy Channel ID)")
                out[str(role).strip().lower()] = text
            return out
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
        places = [*self.channels.values(), self.board_channel, self.forum_channel]
        named = [p for p in places if p is not None]
        if len(named) != len(set(named)):
            raise ValueError("a channel id is named twice among channels, board_channel and forum_channel; "
                             "each place is one channel")
        return self

    @property
    def enabled(self) -> bool:
        """True when a bot token is set."""
        return self.token is not None

    @property
    def owner(self) -> str | None:
        """The owner's user id: the first of ``allowed_user_ids``."""
        return self.allowed_user_ids[0] if self.allowed_user_ids else None

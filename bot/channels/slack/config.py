"""``slack:``, the Slack channel's config section (validated by pydantic).

The channel runs when ``bot_token`` is set; then the signing secret (Events API over HTTP) or the
app-level token (Socket Mode) must be set too, or loading the config fails naming the key and the
variable to export.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, SecretStr, field_serializer, field_validator, model_validator

from bot.config.base import StrictModel, base_url, blank_is_unset

__all__ = ["SLACK_API", "SlackAccess", "SlackMode", "SlackSection"]

SLACK_API = "https://slack.com/api"


class SlackMode(StrEnum):
    """How Slack's events reach Sabha."""

    EVENTS = "events"  # the Events API over HTTP (a public URL, signed requests)
    SOCKET = "socket"  # Socket Mode (a WebSocket Sabha opens; no public URL needed)


class SlackAccess(StrEnum):
    """Who may talk to the board on Slack."""

    ALLOWLIST = "allowlist"  # only ``allowed_user_ids``
    PUBLIC = "public"  # anyone in the workspace, within a per-sender rate and a daily cost cap


class SlackSection(StrictModel):
    """``slack``: a Slack app in one workspace (runs when ``bot_token`` is set)."""

    bot_token: SecretStr | None = Field(None, description="the app's bot token (xoxb-...); write ${SLACK_BOT_TOKEN}")
    signing_secret: SecretStr | None = Field(None, description="the app's signing secret (Basic Information); "
                                                               "write ${SLACK_SIGNING_SECRET}")
    app_token: SecretStr | None = Field(None, description="an app-level token (xapp-..., connections:write) for "
                                                          "Socket Mode; write ${SLACK_APP_TOKEN}")
    mode: SlackMode = Field(SlackMode.EVENTS, description="events: Slack posts to events_path (needs a public "
                                                          "URL); socket: Sabha connects out (Socket Mode)")
    api_base_url: str = Field(SLACK_API, description="Slack's Web API endpoint; a local server in tests")
    events_path: str = Field("/slack/events", description="route on the server section's host/port for events, "
                                                          "interactivity and slash commands")
    access: SlackAccess = Field(SlackAccess.ALLOWLIST, description="allowlist: only allowed_user_ids; public: "
                                                                  "anyone in the workspace, within the public limits")
    allowed_user_ids: list[str] = Field(default_factory=list, description="Slack user ids (U...) who may talk to "
                                                                          "the board; the first is the owner")
    board_channel: str | None = Field(None, description="a channel id (C...) where the whole board sits: the chair "
                                                        "answers, @finance / finance: address an advisor; each "
                                                        "conversation is a thread")
    channels: dict[str, str] = Field(default_factory=dict, description="role -> channel id (C...): a channel per "
                                                                       "advisor, e.g. {finance: C0FINANCE}")
    public_rate_per_minute: float = Field(6.0, gt=0, le=600, description="public mode: messages a minute per sender")
    public_daily_usd: float = Field(5.0, ge=0, description="public mode: what strangers' model calls may cost a day "
                                                           "(UTC), all of them together")
    stream: bool = Field(True, description="show answers while they are written (a message edited by chat.update)")
    stream_edit_interval_s: float = Field(1.5, ge=1.0, le=60, description="at least this long between two edits "
                                                                          "of one streamed answer (Slack allows "
                                                                          "about 50 chat.update a minute)")

    _blank_is_unset = blank_is_unset("bot_token", "signing_secret", "app_token")

    @field_serializer("mode", "access")
    def _enum_text(self, value: StrEnum) -> str:
        return value.value

    @field_validator("api_base_url")
    @classmethod
    def _base(cls, value: str) -> str:
        return base_url(value, SLACK_API)

    @field_validator("board_channel")
    @classmethod
    def _board(cls, value: str | None) -> str | None:
        return None if value is None or not value.strip() else _channel_id(value)

    @field_validator("channels")
    @classmethod
    def _per_role(cls, value: dict[str, str]) -> dict[str, str]:
        ids = {role.strip().lower(): _channel_id(channel) for role, channel in value.items()}
        seen: dict[str, str] = {}
        for role, channel in ids.items():
            if channel in seen:
                raise ValueError(f"{channel} is given to both {seen[channel]} and {role}; give each advisor its "
                                 "own channel (or use board_channel for one shared channel)")
            seen[channel] = role
        return ids

    @field_validator("allowed_user_ids", mode="before")
    @classmethod
    def _users(cls, value: object) -> object:
        if isinstance(value, list):
            return [str(v).strip() for v in value]
        return value

    @model_validator(mode="after")
    def _board_not_an_advisor(self) -> SlackSection:
        if self.board_channel is not None and self.board_channel in self.channels.values():
            raise ValueError(f"board_channel {self.board_channel} is also an advisor's channel in channels; "
                             "use another channel for the board")
        return self

    @field_validator("events_path")
    @classmethod
    def _path(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError("must start with / (e.g. /slack/events)")
        return value

    @model_validator(mode="after")
    def _secrets(self) -> SlackSection:
        if self.bot_token is None:
            return self
        needed = (("signing_secret", "SLACK_SIGNING_SECRET") if self.mode is SlackMode.EVENTS
                  else ("app_token", "SLACK_APP_TOKEN"))
        if not _set(getattr(self, needed[0])):
            raise ValueError(f"bot_token is set, so the channel runs in {self.mode.value} mode, but "
                             f"{needed[0]} is not set (export {needed[1]})")
        return self

    @property
    def enabled(self) -> bool:
        """True when a bot token is set."""
        return self.bot_token is not None


def _set(secret: SecretStr | None) -> bool:
    return secret is not None and bool(secret.get_secret_value().strip())


def _channel_id(value: str) -> str:
    value = str(value).strip().upper()
    if not value or value[0] not in "CG" or not value.isalnum():
        raise ValueError(f"{value!r} is not a Slack channel id: copy it from the channel's details (it starts "
                         "with C, e.g. C0123ABCDEF), not the channel's name")
    return value

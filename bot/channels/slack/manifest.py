"""The Slack app's manifest: the scopes, events, slash command and URLs the channel needs.

:data:`BOT_SCOPES` is the one list of bot scopes the channel uses, each with what it is for;
``sabha slack setup`` prints :func:`manifest` for Slack's "Create New App > From a manifest" page
and ``sabha doctor`` names any of :data:`BOT_SCOPES` the installed token lacks.
"""

from __future__ import annotations

from typing import Any

__all__ = ["BOARD_COMMAND", "BOT_EVENTS", "BOT_SCOPES", "manifest", "missing_scopes"]

#: Bot token scopes -> what the channel does with each (doctor names the purpose of a missing one).
BOT_SCOPES: dict[str, str] = {
    "chat:write": "post answers and update them as they stream (chat.postMessage, chat.update)",
    "channels:history": "read messages in public channels the app is in",
    "groups:history": "read messages in private channels the app is in",
    "im:history": "read direct messages to the app",
    "app_mentions:read": "hear @-mentions of the app",
    "users:read": "name the people who write (users.info)",
    "files:read": "read files people share with the board (files.info and the private URL)",
    "commands": "the /board slash command",
}

#: Events the app subscribes to (each needs the scope beside it in :data:`BOT_SCOPES`).
BOT_EVENTS: tuple[str, ...] = ("app_mention", "message.channels", "message.groups", "message.im")

BOARD_COMMAND = "/board"


def manifest(*, name: str, public_url: str | None, events_path: str, socket_mode: bool) -> dict[str, Any]:
    """The app manifest (Slack's schema: display_information, features, oauth_config, settings).

    ``public_url`` (https://host, no path) makes the request URLs ``<public_url><events_path>``; in
    Socket Mode Slack needs none."""
    url = None if socket_mode or not public_url else public_url.rstrip("/") + events_path
    command: dict[str, Any] = {"command": BOARD_COMMAND, "description": "Ask the board, or call a meeting",
                               "usage_hint": "meeting on pricing | status | @finance what is our runway?",
                               "should_escape": False}
    events: dict[str, Any] = {"bot_events": list(BOT_EVENTS)}
    interactivity: dict[str, Any] = {"is_enabled": True}
    if url is not None:
        command["url"] = url
        events["request_url"] = url
        interactivity["request_url"] = url
    return {
        "_metadata": {"major_version": 1, "minor_version": 1},
        "display_information": {"name": name, "description": "A board of AI advisors",
                                "background_color": "#2c2d30"},
        "features": {"app_home": {"messages_tab_enabled": True, "messages_tab_read_only_enabled": False},
                     "bot_user": {"display_name": name, "always_online": True},
                     "slash_commands": [command]},
        "oauth_config": {"scopes": {"bot": list(BOT_SCOPES)}},
        "settings": {"event_subscriptions": events, "interactivity": interactivity,
                     "org_deploy_enabled": False, "socket_mode_enabled": socket_mode,
                     "token_rotation_enabled": False},
    }


def missing_scopes(granted_header: str | None) -> list[str]:
    """The scopes of :data:`BOT_SCOPES` not in Slack's ``x-oauth-scopes`` header (comma-separated)."""
    granted = {s.strip() for s in (granted_header or "").split(",") if s.strip()}
    return [scope for scope in BOT_SCOPES if scope not in granted]

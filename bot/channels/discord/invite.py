"""What the board's bot needs in a Discord server, and the invite link that asks for exactly that.

:data:`NEEDED` names each permission the channel uses and why (computed into one integer with
``discord.Permissions``, so the bits are the library's, not typed in here): reading and writing in the
board's channels, posting in threads (each conversation and each meeting has one), creating those threads,
reading the history a reply quotes, embeds (links in answers) and attaching files (a spoken answer).
:func:`invite_url` is the OAuth2 link for the application (scopes ``bot`` and ``applications.commands``: the
slash commands), made by
``discord.utils.oauth_url``; ``sabha discord setup`` prints it. :func:`missing` names what a server's
grant lacks (``sabha doctor``).

The Message Content intent is no permission: the owner switches it on in the Developer Portal
(Bot > Privileged Gateway Intents); without it every message arrives with empty text.
:data:`MESSAGE_CONTENT_FLAGS` are the application flags that say it is on (``GET /applications/@me``).
"""

from __future__ import annotations

import discord

__all__ = ["INTENT_HOWTO", "MESSAGE_CONTENT_FLAGS", "NEEDED", "SCOPES", "invite_url", "missing", "needed_permissions"]

#: The OAuth2 scopes of the invite: the bot user, and the slash commands in the server.
SCOPES = ("bot", "applications.commands")

#: Permission (``discord.Permissions`` attribute) -> what the board uses it for.
NEEDED: dict[str, str] = {
    "view_channel": "see the board's channels",
    "send_messages": "answer in a channel",
    "send_messages_in_threads": "answer in a conversation's or a meeting's thread",
    "create_public_threads": "open a thread for a meeting",
    "read_message_history": "quote the message it answers",
    "embed_links": "show links in answers",
    "attach_files": "send a spoken answer or a file",
}

#: The application flags that mean the Message Content intent is on (verified, or the limited one below 100 servers).
MESSAGE_CONTENT_FLAGS = (discord.ApplicationFlags.gateway_message_content.flag
                         | discord.ApplicationFlags.gateway_message_content_limited.flag)

INTENT_HOWTO = ("Developer Portal > your application > Bot > Privileged Gateway Intents: switch on MESSAGE CONTENT "
                "INTENT and save (without it every message reaches the board with empty text)")


def needed_permissions() -> discord.Permissions:
    """Every permission of :data:`NEEDED` as one ``discord.Permissions``."""
    return discord.Permissions(**dict.fromkeys(NEEDED, True))


def invite_url(application_id: str, guild_id: str | None = None) -> str:
    """The OAuth2 link that adds the bot with :data:`SCOPES` and :func:`needed_permissions` (``guild_id``: that
    server preselected)."""
    if guild_id is None:
        return discord.utils.oauth_url(application_id, permissions=needed_permissions(), scopes=SCOPES)
    return discord.utils.oauth_url(application_id, permissions=needed_permissions(), scopes=SCOPES,
                                   guild=discord.Object(int(guild_id)))


def missing(granted: int) -> list[str]:
    """The :data:`NEEDED` permissions that ``granted`` (a permissions integer) lacks; none for an administrator."""
    have = discord.Permissions(granted)
    if have.administrator:
        return []
    return [name for name in NEEDED if not getattr(have, name)]

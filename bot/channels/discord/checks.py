"""``sabha doctor``'s Discord checks: the token, the Message Content intent, the bot's place in the server.

Three requests to the REST API (``discord.api_base_url``), each a :class:`Finding` (``sabha doctor`` prints it
as OK or FAIL with the fix; :mod:`bot.cli.doctor` only calls :func:`discord_findings`):

1. ``GET /users/@me`` with the bot token: the token works (401: it was refused; the token is never printed);
2. ``GET /applications/@me``: the application is the configured ``discord.application_id`` and its flags
   have the Message Content intent (:data:`.invite.MESSAGE_CONTENT_FLAGS`), else every message would reach
   the board with empty text;
3. with ``discord.guild_id``: ``GET /guilds/{id}`` (its roles and owner) and ``GET /guilds/{id}/members/{bot}``
   (the bot's roles): the bot is in the server, and the permissions its roles give it there cover
   :data:`.invite.NEEDED` (what is missing is named; a channel's own overwrites are not looked at).

An API that does not answer is said plainly, with where it was asked (the base URL, never the token).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import aiohttp
import discord

from bot.channels.discord.config import DiscordSection
from bot.channels.discord.invite import INTENT_HOWTO, MESSAGE_CONTENT_FLAGS, NEEDED, missing

__all__ = ["Finding", "discord_findings", "guild_permissions"]

NAME = "channel discord"


@dataclass(frozen=True)
class Finding:
    """One check's result: ``fix`` says what to do when it failed (None: it passed)."""

    name: str
    detail: str
    fix: str | None = None

    @property
    def ok(self) -> bool:
        """True when the check passed."""
        return self.fix is None


class _Unreachable(Exception):
    """The API did not answer (network, timeout, not JSON)."""


async def _get(session: aiohttp.ClientSession, base: str, path: str, token: str) -> tuple[int, Any]:
    try:
        async with session.get(f"{base}{path}", headers={"Authorization": f"Bot {token}"},
                               allow_redirects=False) as resp:
            status = resp.status
            body = await resp.json(content_type=None) if resp.status < 500 else None
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        reason = "connection refused or no route" if isinstance(exc, aiohttp.ClientConnectorError) \
            else type(exc).__name__
        raise _Unreachable(reason) from exc
    if status >= 500:
        raise _Unreachable(f"HTTP {status}")
    return status, body


def guild_permissions(guild: dict[str, Any], member: dict[str, Any], bot_id: str) -> int:
    """The permissions integer the bot's roles give it in ``guild`` (its owner: everything): the @everyone
    role (whose id is the guild's) and each of the member's roles, or'ed together."""
    if str(guild.get("owner_id")) == bot_id:
        return discord.Permissions.all().value
    roles = {str(r.get("id")): r for r in guild.get("roles") or [] if isinstance(r, dict)}
    granted = 0
    for role_id in [str(guild.get("id")), *(str(r) for r in member.get("roles") or [])]:
        role = roles.get(role_id)
        if role is not None and str(role.get("permissions", "0")).isdigit():
            granted |= int(role["permissions"])
    return granted


async def discord_findings(settings: DiscordSection, session: aiohttp.ClientSession) -> list[Finding]:
    """The checks of the module docstring, in order; the first that cannot go on ends the list."""
    if settings.token is None:
        return []
    token, base = settings.token.get_secret_value(), settings.api_base_url
    try:
        status, me = await _get(session, base, "/users/@me", token)
        if status in (401, 403) or not isinstance(me, dict):
            return [Finding(NAME, f"reachable, but the bot token was refused (HTTP {status})",
                            "copy the token from the Developer Portal (Bot > Reset Token) into DISCORD_BOT_TOKEN")]
        bot_id = str(me.get("id"))
        found = [Finding(NAME, f"{base} knows the bot: {me.get('username', '?')} ({bot_id})")]
        found.append(await _intent(session, settings, token))
        if settings.guild_id is not None:
            found.append(await _server(session, settings, token, bot_id))
        return found
    except _Unreachable as exc:
        return [Finding(NAME, f"{base} is not reachable ({exc})", "check the network, or discord.api_base_url")]


async def _intent(session: aiohttp.ClientSession, settings: DiscordSection, token: str) -> Finding:
    name = "discord message content intent"
    status, app = await _get(session, settings.api_base_url, "/applications/@me", token)
    if status != 200 or not isinstance(app, dict):
        return Finding(name, f"the application could not be read (HTTP {status})",
                       "check that the token is the bot token of discord.application_id")
    if settings.application_id is not None and str(app.get("id")) != settings.application_id:
        return Finding(name, f"the token belongs to application {app.get('id')}, not discord.application_id "
                             f"{settings.application_id}",
                       "copy the Application ID of the bot's own application (General Information)")
    flags = int(app.get("flags") or 0)
    if not flags & MESSAGE_CONTENT_FLAGS:
        return Finding(name, "the Message Content intent is off: messages would reach the board empty", INTENT_HOWTO)
    return Finding(name, "on")


async def _server(session: aiohttp.ClientSession, settings: DiscordSection, token: str, bot_id: str) -> Finding:
    name = "discord server permissions"
    guild_id = settings.guild_id
    status, guild = await _get(session, settings.api_base_url, f"/guilds/{guild_id}", token)
    invite = "invite the bot with the link `sabha discord setup` prints"
    if status in (403, 404) or not isinstance(guild, dict):
        return Finding(name, f"the bot is not in server {guild_id} (HTTP {status})",
                       f"{invite}, or correct discord.guild_id")
    status, member = await _get(session, settings.api_base_url, f"/guilds/{guild_id}/members/{bot_id}", token)
    if status != 200 or not isinstance(member, dict):
        return Finding(name, f"the bot is not a member of server {guild_id} (HTTP {status})", invite)
    lacking = missing(guild_permissions(guild, member, bot_id))
    if lacking:
        return Finding(name, f"in {guild.get('name', guild_id)} the bot lacks: "
                             + ", ".join(f"{p} ({NEEDED[p]})" for p in lacking),
                       f"give the bot's role these permissions (Server Settings > Roles), or {invite}")
    return Finding(name, f"in {guild.get('name', guild_id)} the bot has every permission it needs")

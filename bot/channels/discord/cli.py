"""``sabha discord ...``: setting the Discord channel up from the command line.

``sabha discord setup`` prints what a person does once, in order: the invite link that adds the bot to a
server with the permissions the board needs (:mod:`.invite`: scopes ``bot`` and ``applications.commands``,
the permissions integer and what each permission is for), the Message Content intent to switch on in the
Developer Portal, the config keys to set, and ``sabha doctor`` to check it all. It reads
``discord.application_id`` (and ``discord.guild_id``, which preselects the server) from the config;
``--application-id`` / ``--guild-id`` give them before the config has them. Nothing secret is printed or needed.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from bot.cli.common import UserError, emit

if TYPE_CHECKING:  # `sabha --help` builds this parser: the rest is imported when the command runs
    from bot.channels.plugin import CliCommand, WithParts
    from bot.config import LoadedConfig

__all__ = ["add_cli"]


def _snowflake(value: str) -> str:
    if not value.strip().isdigit():
        raise argparse.ArgumentTypeError(f"{value!r} is not a Discord id (a number: Developer Mode > Copy ID)")
    return value.strip()


def add_cli(sub: Any, common: argparse.ArgumentParser) -> CliCommand:
    """Add ``sabha discord setup``; returns the handler."""
    p = sub.add_parser("discord", parents=[common], help="set up the Discord channel",
                       description="Set up the Discord channel: the bot's invite link and what to switch on.")
    dsub = p.add_subparsers(dest="discord_command", metavar="ACTION", required=True)
    s = dsub.add_parser("setup", parents=[common], help="print the invite link and the steps to connect the bot",
                        description="Print the OAuth2 invite link that adds the bot to your server with the "
                                    "permissions the board needs (and slash commands), the Message Content intent "
                                    "to switch on, and the config keys to set. Then run `sabha doctor`.")
    s.add_argument("--application-id", type=_snowflake, metavar="ID",
                   help="the application's id (default: discord.application_id)")
    s.add_argument("--guild-id", type=_snowflake, metavar="ID",
                   help="preselect this server in the invite (default: discord.guild_id)")
    return cmd_discord


async def cmd_discord(loaded: LoadedConfig, args: argparse.Namespace, with_parts: WithParts) -> int:
    """discord setup."""
    from bot.channels.discord.invite import INTENT_HOWTO, NEEDED, SCOPES, invite_url, needed_permissions

    section = loaded.config.discord
    application_id = args.application_id or section.application_id
    if application_id is None:
        raise UserError("no application id: copy the Application ID from the Developer Portal (your application > "
                        "General Information) and run `sabha discord setup --application-id ID`, or set "
                        "discord.application_id")
    guild_id = args.guild_id or section.guild_id
    permissions = needed_permissions()
    emit("1. Add the bot to your server with this link (open it as the server's owner or an admin):")
    emit("")
    emit(f"   {invite_url(application_id, guild_id)}")
    emit("")
    emit(f"   scopes: {' '.join(SCOPES)}; permissions {permissions.value}:")
    for name, why in NEEDED.items():
        emit(f"     - {name}: {why}")
    emit("")
    emit(f"2. {INTENT_HOWTO}.")
    emit("")
    emit("3. In sabha.yaml:")
    emit("     discord:")
    emit("       token: ${DISCORD_BOT_TOKEN}   # Bot > Reset Token; export it, never write it here")
    emit(f"       application_id: \"{application_id}\"")
    emit(f"       guild_id: \"{guild_id or 'YOUR_SERVER_ID'}\"   # Developer Mode on, right-click the server > Copy ID")
    emit("       allowed_user_ids: [\"YOUR_USER_ID\"]   # the first is the owner")
    emit("")
    emit("4. Run `sabha doctor`: it checks the token, the intent and the bot's permissions in the server.")
    return 0

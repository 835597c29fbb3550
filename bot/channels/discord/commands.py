"""The board's slash commands on Discord: what they are (:data:`SLASH_COMMANDS`), the words each stands for
(:func:`slash_text`) and registering them (:class:`SlashCommands`).

Each is the message a person would type, sent as the presser through the intake (:mod:`.interactions`):

* ``/board question: <text> [advisor: <role>]``: the question to the board (``@finance <text>`` when an advisor
  is chosen: plain words otherwise, routed as any message in that place);
* ``/meeting topic: <text>``: ``/meeting <topic>``, a board meeting (it runs in a thread of its own: :mod:`.meeting`);
* ``/decisions``: the board's decisions; ``/help``: what one can say here.

They are defined once (:func:`definitions`, the JSON Discord takes: type 1 ``CHAT_INPUT`` commands, string
options, the advisors as the choices of ``advisor``) and registered when the channel starts: with
``discord.guild_id`` as that server's commands (they show at once), else as the application's global ones. The
registration is Discord's *bulk overwrite* (``PUT /applications/{app}/guilds/{guild}/commands``): the whole list
replaces what was there, so registering again at every start is idempotent (no duplicates, stale commands
removed), and it is done once per start (:meth:`SlashCommands.register`), not again on a gateway reconnect. A
refusal (the bot was invited without ``applications.commands``) is logged with the fix; the channel runs on
without slash commands.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp
import discord

__all__ = ["SLASH_COMMANDS", "SlashCommand", "SlashCommands", "definitions", "slash_text"]

log = logging.getLogger("sabha.discord")

#: Discord's limits: a command's description, an option's choices.
DESCRIPTION_CHARS = 100
MAX_CHOICES = 25
#: ``CHAT_INPUT`` (a slash command) and a ``STRING`` option, in Discord's numbers.
CHAT_INPUT = 1
STRING = 3


@dataclass(frozen=True)
class SlashCommand:
    """One slash command: its name, what it says it does, and its options (name, description, required)."""

    name: str
    description: str
    options: tuple[tuple[str, str, bool], ...] = ()


SLASH_COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("board", "Ask the board (or one advisor)",
                 (("question", "what you want to ask", True), ("advisor", "who should answer (default: the chair)",
                                                                False))),
    SlashCommand("meeting", "Convene a board meeting (in a thread of its own)",
                 (("topic", "what the board should decide", True),)),
    SlashCommand("decisions", "The board's decisions and what waits for the owner"),
    SlashCommand("help", "What you can say to the board here"),
)


def definitions(roles: Mapping[str, str]) -> list[dict[str, Any]]:
    """:data:`SLASH_COMMANDS` as Discord's JSON; ``roles`` (role -> label) are the choices of ``advisor``."""
    choices = [{"name": label[:DESCRIPTION_CHARS] or role, "value": role}
               for role, label in list(roles.items())[:MAX_CHOICES]]
    found = []
    for command in SLASH_COMMANDS:
        options: list[dict[str, Any]] = []
        for name, description, required in command.options:
            option: dict[str, Any] = {"type": STRING, "name": name, "description": description,
                                      "required": required}
            if name == "advisor" and choices:
                option["choices"] = choices
            options.append(option)
        found.append({"type": CHAT_INPUT, "name": command.name, "description": command.description,
                      "options": options})
    return found


def _options(data: Mapping[str, Any]) -> dict[str, str]:
    found = {}
    for option in data.get("options") or []:
        if isinstance(option, dict) and isinstance(option.get("name"), str) and option.get("value") is not None:
            found[option["name"]] = " ".join(str(option["value"]).split())
    return found


def slash_text(data: Mapping[str, Any]) -> str | None:
    """The words an application command's ``data`` (``name``, ``options``) stands for; None when it is none of
    Sabha's or says nothing (an empty question)."""
    name, options = data.get("name"), _options(data)
    if name == "board":
        question = options.get("question", "").strip()
        if not question:
            return None
        advisor = options.get("advisor", "").strip().lstrip("@").lower()
        return f"@{advisor} {question}" if advisor else question
    if name == "meeting":
        topic = options.get("topic", "").strip()
        return f"/meeting {topic}" if topic else None
    if name in ("decisions", "help"):
        return f"/{name}"
    return None


class SlashCommands:
    """Registers :func:`definitions` once per start (see the module docstring)."""

    def __init__(self, http: discord.http.HTTPClient, application_id: str, guild_id: str | None) -> None:
        self.http = http
        self.application_id = application_id
        self.guild_id = guild_id
        self.registered = 0  # registrations made (1 after a start that registered)

    async def register(self, roles: Mapping[str, str]) -> bool:
        """Overwrite the server's (or the application's) commands with :func:`definitions` (at most once per
        start: later calls do nothing); False when Discord refused (logged with the fix)."""
        if self.registered:
            return True
        payload: Sequence[dict[str, Any]] = definitions(roles)
        try:
            if self.guild_id is not None:
                await self.http.bulk_upsert_guild_commands(self.application_id, self.guild_id, list(payload))
            else:
                await self.http.bulk_upsert_global_commands(self.application_id, list(payload))
        except discord.HTTPException as exc:
            log.error("discord: registering the slash commands was refused (%s %s): invite the bot again with the "
                      "link of `sabha discord setup` (it asks for applications.commands); messages still work",
                      exc.status, exc.text)
            return False
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            log.error("discord: the slash commands could not be registered (%s: %s); they are tried again at the "
                      "next start, messages still work", type(exc).__name__, exc)
            return False
        self.registered += 1
        where = f"server {self.guild_id}" if self.guild_id is not None else "every server (global commands)"
        log.info("discord: slash commands %s registered for %s",
                 ", ".join(f"/{c.name}" for c in SLASH_COMMANDS), where)
        return True

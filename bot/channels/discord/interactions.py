"""``INTERACTION_CREATE``: a button of Sabha's pressed, or one of its slash commands used, as the user's message.

What one interaction asks is an :class:`Invocation` (:func:`invocation_of` reads it from discord.py's
``Interaction``, :func:`invocation_from` from the gateway's JSON): a press of a button whose ``custom_id`` is one
of Sabha's (:func:`.components.command_of`) is the presser sending the button's command where the button is; a
slash command (:func:`.commands.slash_text`) is the words it stands for, in the channel or thread where it was
used. Anything else (another application's component, an autocomplete) is not the board's and is left alone.

:class:`Interactions` takes it in, in this order (the intake's durability rule, within Discord's 3 seconds):

1. **refused at once, nothing stored**: a place that is not the board's, a stranger (not in
   ``discord.allowed_user_ids`` while the channel is not public), or a member pressing an owner-only button
   (``/ratify``, ``/veto``, ``/revisit``, ``/allow`` ...): an *ephemeral* message only the presser sees says why;
   nothing changes;
2. **stored**: its token is kept (:class:`.followups.InteractionTokens`), then the message is claimed by the
   intake (:meth:`bot.intake.intake.Intake.receive`: stored with its envelope, deduplicated on its id);
3. **acknowledged**: only then Discord is answered: a press with a deferred update (type 6: the button's message
   stays as it is), a slash command with a deferred message (type 5: "thinking..."). If the board cannot store it
   (a full disk), the user is told so ephemerally and nothing is acknowledged as taken.

The outcome, the command's reply, then comes as the interaction's follow-up (:mod:`.followups`), in the thread
where the button was. The intake's id of an interaction (:func:`message_id_of`) is ``<button message>:i:<id>`` for
a press and ``i:<id>`` for a slash command; :func:`interaction_of` reads the interaction's id back from a reply's
``reply_to``. A gateway replay of an interaction after a resume is a duplicate (the intake skips it; Discord
answers a second response with "already acknowledged", which is taken as done).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import discord

from board.envelope import Envelope
from bot.channels.discord.commands import slash_text
from bot.channels.discord.components import command_of
from bot.channels.discord.followups import InteractionTokens
from bot.intake.inbox import Arrival

__all__ = ["ACK_WAIT_S", "InteractionHooks", "InteractionKind", "Interactions", "Invocation", "Refusal",
           "interaction_of", "invocation_from", "invocation_of", "message_id_of", "quoted_message"]

log = logging.getLogger("sabha.discord")

#: Longest a reply waits for its interaction's first response to be made (the follow-up needs it).
ACK_WAIT_S = 5.0
#: Discord's interaction types: a component (a button), an application (slash) command.
COMPONENT = 3
APPLICATION_COMMAND = 2
_EPHEMERAL = 64


class InteractionKind(StrEnum):
    """What an interaction is to the board."""

    PRESS = "press"  # a button of Sabha's pressed
    SLASH = "slash"  # one of Sabha's slash commands


class Refusal(StrEnum):
    """Why an interaction is refused at once (the ephemeral line the user sees)."""

    PLACE = "The board doesn't answer here; use this in one of the board's channels or threads."
    STRANGER = "Sorry, only the board's members can use this."
    OWNER_ONLY = "Only the board's owner can /{command}; nothing changed."
    CANNOT_SAVE = "I can't save anything right now, please try again shortly."


@dataclass(frozen=True)
class Invocation:
    """What one interaction asks (see the module docstring)."""

    kind: InteractionKind
    interaction_id: str
    token: str
    application_id: str
    user_id: str
    user_name: str
    channel_id: str
    text: str  # the button's command, or the slash command's words
    guild_id: str | None = None  # None: in a DM
    parent_id: str | None = None  # the channel of the thread it was used in, when it was one
    message_id: str | None = None  # a press: the message the button is on


def message_id_of(invocation: Invocation) -> str:
    """The intake's id of the interaction: ``<button message>:i:<id>`` (a press), ``i:<id>`` (a slash command)."""
    if invocation.kind is InteractionKind.PRESS and invocation.message_id:
        return f"{invocation.message_id}:i:{invocation.interaction_id}"
    return f"i:{invocation.interaction_id}"


def interaction_of(message_id: str | None) -> str | None:
    """The interaction's id in an intake id made by :func:`message_id_of` (None: an ordinary message)."""
    if not message_id:
        return None
    _, sep, found = message_id.rpartition("i:")
    return found if sep and found.isdigit() and (message_id == f"i:{found}" or message_id.endswith(f":i:{found}")) \
        else None


def quoted_message(message_id: str | None) -> str | None:
    """The message a press's answer quotes (the button's), or ``message_id`` itself when it is a message's."""
    if not message_id:
        return None
    if interaction_of(message_id) is None:
        return message_id
    head = message_id.split(":i:", 1)[0]
    return head if head.isdigit() else None


def _text_of(kind: int, data: Mapping[str, Any] | None) -> tuple[InteractionKind, str] | None:
    if not data:
        return None
    if kind == COMPONENT:
        command = command_of(data.get("custom_id") if isinstance(data.get("custom_id"), str) else None)
        return (InteractionKind.PRESS, command) if command else None
    if kind == APPLICATION_COMMAND and int(data.get("type") or 1) == 1:
        words = slash_text(data)
        return (InteractionKind.SLASH, words) if words else None
    return None


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def invocation_from(payload: Mapping[str, Any]) -> Invocation | None:
    """The :class:`Invocation` of an ``INTERACTION_CREATE``'s JSON (Discord's documented shape); None: not one of
    Sabha's buttons or commands."""
    found = _text_of(int(payload.get("type") or 0), payload.get("data"))
    if found is None:
        return None
    member = _dict(payload.get("member"))
    user = _dict(member.get("user")) or _dict(payload.get("user"))
    channel, message = _dict(payload.get("channel")), _dict(payload.get("message"))
    name = member.get("nick") or user.get("global_name") or user.get("username") or str(user.get("id"))
    return Invocation(kind=found[0], interaction_id=str(payload["id"]), token=str(payload["token"]),
                      application_id=str(payload["application_id"]), user_id=str(user.get("id")),
                      user_name=str(name), channel_id=str(payload.get("channel_id") or channel.get("id")),
                      text=found[1], guild_id=str(payload["guild_id"]) if payload.get("guild_id") else None,
                      parent_id=str(channel["parent_id"]) if channel.get("parent_id") else None,
                      message_id=str(message["id"]) if message.get("id") else None)


def invocation_of(interaction: discord.Interaction[Any]) -> Invocation | None:
    """The :class:`Invocation` of discord.py's ``Interaction`` (as :func:`invocation_from` reads the JSON)."""
    found = _text_of(interaction.type.value, dict(interaction.data) if interaction.data else None)
    if found is None or interaction.channel_id is None:
        return None
    parent = interaction.channel.parent_id if isinstance(interaction.channel, discord.Thread) else None
    user = interaction.user
    return Invocation(kind=found[0], interaction_id=str(interaction.id), token=interaction.token,
                      application_id=str(interaction.application_id), user_id=str(user.id),
                      user_name=user.display_name, channel_id=str(interaction.channel_id), text=found[1],
                      guild_id=str(interaction.guild_id) if interaction.guild_id else None,
                      parent_id=str(parent) if parent else None,
                      message_id=str(interaction.message.id) if interaction.message is not None else None)


@dataclass(frozen=True)
class InteractionHooks:
    """What :class:`Interactions` uses of the channel: where an interaction sits (``envelope_for``: its envelope,
    None when the place is not the board's), whether its user may use the board (``may_use``: a listed member, or
    anyone while the channel is public), the lane of an envelope, and the intake's ``receive``."""

    envelope_for: Callable[[Invocation], Envelope | None]
    may_use: Callable[[Envelope], bool]
    lane: Callable[[Envelope], str]
    receive: Callable[[Sequence[Arrival]], Awaitable[None]]


class Interactions:
    """Takes interactions in (see the module docstring)."""

    def __init__(self, hooks: InteractionHooks, tokens: InteractionTokens, owner_only: Collection[str]) -> None:
        self.hooks = hooks
        self.tokens = tokens
        self.owner_only = owner_only  # the registry's owner-only commands (read live: channels add theirs)
        self._responded: dict[str, asyncio.Event] = {}
        self.taken = 0
        self.refused = 0

    async def handle(self, interaction: discord.Interaction[Any]) -> None:
        """``on_interaction``: take ``interaction`` in and answer Discord (never raises)."""
        invocation = invocation_of(interaction)
        if invocation is None:
            return
        try:
            refusal = await self.take(invocation)
        except Exception:  # Discord must get an answer; the cause is logged
            log.exception("discord: taking interaction %s in failed", invocation.interaction_id)
            refusal = Refusal.CANNOT_SAVE.value
        await self._respond(interaction, invocation, refusal)

    async def take(self, invocation: Invocation) -> str | None:
        """Store ``invocation`` (None) or say why not (the ephemeral line)."""
        envelope = self.hooks.envelope_for(invocation)
        if envelope is None:
            return Refusal.PLACE.value
        if not self.hooks.may_use(envelope):
            log.info("discord: %s %s by user %s, who may not use the board, refused", invocation.kind.value,
                     invocation.text.split(maxsplit=1)[0], invocation.user_id)
            return Refusal.STRANGER.value
        command = envelope.text.split(maxsplit=1)[0].lstrip("/").lower() if envelope.text.startswith("/") else ""
        if command in self.owner_only and not envelope.is_owner:
            log.info("discord: owner-only /%s by user %s refused; nothing changed", command, invocation.user_id)
            return Refusal.OWNER_ONLY.value.format(command=command)
        self._responded.setdefault(invocation.interaction_id, asyncio.Event())
        try:
            await self.tokens.keep(invocation.interaction_id, invocation.token, invocation.application_id,
                                   invocation.kind.value)
            await self.hooks.receive([Arrival(envelope, self.hooks.lane(envelope))])
        except Exception as exc:  # noqa: BLE001 - nothing acknowledged: the user is told to try again
            log.error("discord: interaction %s could not be stored (%s: %s); the user is told to try again",
                      invocation.interaction_id, type(exc).__name__, exc)
            self._done(invocation.interaction_id)
            return Refusal.CANNOT_SAVE.value
        self.taken += 1
        return None

    async def _respond(self, interaction: discord.Interaction[Any], invocation: Invocation,
                       refusal: str | None) -> None:
        """Discord's answer within its 3 seconds: the refusal (ephemeral), or the deferral of the stored one."""
        try:
            if refusal is not None:
                self.refused += 1
                await interaction.response.send_message(refusal, ephemeral=True)
            elif invocation.kind is InteractionKind.PRESS:
                await interaction.response.defer()  # type 6: the outcome follows
            else:
                await interaction.response.defer(thinking=True)  # type 5: "thinking...", the answer follows
            if refusal is None:
                await self.tokens.acknowledged(invocation.interaction_id)
        except discord.InteractionResponded:
            await self.tokens.acknowledged(invocation.interaction_id)
        except discord.HTTPException as exc:
            if exc.code == 40060:  # already acknowledged: a replay of one answered before
                await self.tokens.acknowledged(invocation.interaction_id)
            else:
                log.warning("discord: answering interaction %s failed (%s %s); its outcome goes as a message",
                            invocation.interaction_id, exc.status, exc.text)
        except Exception:  # the stored message is answered anyway (as a message)
            log.exception("discord: answering interaction %s failed", invocation.interaction_id)
        finally:
            self._done(invocation.interaction_id)

    def _done(self, interaction_id: str) -> None:
        event = self._responded.pop(interaction_id, None)
        if event is not None:
            event.set()

    async def responded(self, interaction_id: str) -> None:
        """Until Discord was answered for ``interaction_id`` (at most :data:`ACK_WAIT_S`; at once when it is not
        being answered here): its follow-up needs the first response made."""
        event = self._responded.get(interaction_id)
        if event is None:
            return
        try:
            await asyncio.wait_for(event.wait(), ACK_WAIT_S)
        except TimeoutError:
            log.warning("discord: interaction %s was not answered within %.0f s", interaction_id, ACK_WAIT_S)

"""Chat commands about user memory: ``/memory``, ``/forget``, and the same things asked in words.

``/memory`` lists what the board remembers about the sender: what it heard them say (every
advisor sees those) and what each role saved with the remember tool, under that role.
``/forget <key>`` deletes that fact from every role's memory of the sender and ``/forget all``
deletes everything about them. Asked in words (the whole message, in English), the board
answers from the store, never from a model, so it invents nothing: "what do you remember about
me" lists the facts, "forget that" forgets the fact it heard last (never "forget it": that is
usually about the conversation), "forget everything" / "forget all" (the whole message, or
"forget everything about me") forgets every fact and lists what it dropped. Each first waits
(briefly) for the sender's pending extractions
(:meth:`board.memory.extract.MemoryWriter.settle`), so a fact said just before is there. A
sender only ever sees and deletes their own facts; the owner manages everyone's with ``sabha
memory``. In a group chat none of this is answered (the others would read it): the sender is
asked to ask in a direct chat.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from enum import Enum
from itertools import groupby
from typing import Protocol

from board.commands.host import CommandHost
from board.envelope import Envelope
from board.memory.extract import MemoryWriter
from board.memory.facts import EVERY_ROLE, Fact, FactStore, normalise_key
from board.routing.router import Route
from board.spending.budget import sender_id

__all__ = ["Aliases", "Asked", "MemoryTalk", "asked_of", "register"]

#: Answers a chat message that asks about the sender's memory (None: it does not; answer it as usual).
MemoryTalk = Callable[[Envelope, str], Awaitable[str | None]]


class Aliases(Protocol):
    """The keys one person's facts may be under, and their notes (:class:`board.people.People`)."""

    async def keys_of(self, key: str) -> tuple[str, ...]: ...

    async def forget_said(self, keys: tuple[str, ...]) -> None: ...


class Asked(Enum):
    """What a message asks of the memory, in words."""

    RECALL = "recall"
    FORGET_LAST = "forget_last"
    FORGET_ALL = "forget_all"


_LEAD = r"^(?:(?:hey|hi|ok|okay|so|please|sabha)[,!]?\s+)*"
_TAIL = r"(?:[,]?\s+please)?\s*[.!?]*$"
_ASKED = (
    (Asked.RECALL, re.compile(
        _LEAD + r"(?:what|tell me what|what all)\s+(?:do\s+you\s+(?:remember|recall|keep|store)|"
        r"have\s+you\s+(?:remembered|kept|stored|saved|noted))\s+(?:about|of|on)\s+me" + _TAIL, re.IGNORECASE)),
    (Asked.FORGET_LAST, re.compile(
        _LEAD + r"forget\s+(?:that|this|the\s+last\s+(?:one|thing|fact))(?:\s+about\s+me)?" + _TAIL,
        re.IGNORECASE)),
    (Asked.FORGET_ALL, re.compile(
        _LEAD + r"forget\s+(?:everything|all)(?:\s+(?:about\s+me|you\s+(?:know|remember)\s+about\s+me))?"
        + _TAIL, re.IGNORECASE)),
)
IN_GROUP = "Ask me that in a direct chat: your memory is not shown or changed in a group."
NOTHING_YET = ("I don't remember anything about you yet. When you tell me something worth keeping (your name, "
               "where you are based, how you like answers), I keep it; /memory lists it and /forget drops it.")


def asked_of(text: str) -> Asked | None:
    """What ``text`` (a whole message) asks of the memory, or None."""
    text = " ".join(text.split())
    return next((asked for asked, pattern in _ASKED if pattern.match(text)), None)


def _erased(known: list[Fact]) -> str:
    """``location: Pune; name: Asha`` (each key once: the same fact under several advisors)."""
    return "; ".join(dict.fromkeys(f"{f.key}: {f.value}" for f in known))


def _listing(known: list[Fact], cross_role: bool) -> str:
    lines = ["What the board remembers about you:"]
    ordered = sorted(known, key=lambda f: (f.role != EVERY_ROLE, f.role, f.key))
    for role, group in groupby(ordered, key=lambda f: f.role):
        lines.append("heard from you (every advisor sees these):" if role == EVERY_ROLE else f"{role}:")
        lines.extend(f"  - {f.key}: {f.value}" for f in group)
    if any(f.role != EVERY_ROLE for f in known):
        lines.append("Every advisor sees all of these." if cross_role
                     else "Each advisor sees only what you told them.")
    lines.append("Say \"forget that\" to drop the last thing I picked up, /forget <key> for one fact, "
                 "or \"forget everything\".")
    return "\n".join(lines)


def register(host: CommandHost, facts: FactStore, writer: MemoryWriter | None = None,
             aliases: Aliases | None = None,
             passages: Callable[[tuple[str, ...]], Awaitable[int]] | None = None) -> MemoryTalk:
    """Add ``/memory`` and ``/forget`` to ``host``; returns the answerer of the same asked in words.
    Forgetting everything erases the facts under each of the person's keys (``aliases``), stops their
    pending extractions writing, drops the note of what they last said and (``passages``) what recall could
    find of their own words."""

    async def settle(user: str) -> None:
        if writer is not None:
            await writer.settle(user)

    async def recall(envelope: Envelope) -> str:
        user = sender_id(envelope)
        await settle(user)
        known = await facts.facts(user=user)
        return _listing(known, facts.settings.cross_role) if known else NOTHING_YET

    async def forget_all(user: str) -> str:
        keys = await aliases.keys_of(user) if aliases is not None else (user,)
        if writer is not None:
            writer.forgotten(keys)
        if aliases is not None:
            await aliases.forget_said(keys)
        if passages is not None:
            await passages(keys)
        known = [f for key in keys for f in await facts.facts(user=key)]
        if not known:
            return "There was nothing to forget: I don't remember anything about you."
        count = sum([await facts.forget(key) for key in keys])
        return (f"Done: I forgot everything I remembered about you ({count} fact(s): {_erased(known)}). Nothing "
                "about you is kept now; what you tell me from here on may be remembered again.")

    async def memory(envelope: Envelope, route: Route) -> str:
        return IN_GROUP if envelope.is_group else await recall(envelope)

    async def forget(envelope: Envelope, route: Route) -> str:
        if envelope.is_group:
            return IN_GROUP
        user = sender_id(envelope)
        arg = route.text.strip()
        if not arg:
            return "Usage: /forget <key> (see /memory for the keys), or /forget all"
        await settle(user)
        if arg.lower() == "all":
            return await forget_all(user)
        keys = await aliases.keys_of(user) if aliases is not None else (user,)
        count = sum([await facts.forget(who, key=arg) for who in keys])
        if not count:
            return f"I don't remember anything under {normalise_key(arg)!r}; /memory lists the keys."
        return f"Forgot {normalise_key(arg)!r}" + (f" ({count} advisors had it)." if count > 1 else ".")

    async def talk(envelope: Envelope, text: str) -> str | None:
        asked = asked_of(text)
        if asked is None:
            return None
        if envelope.is_group:
            return IN_GROUP
        if asked is Asked.RECALL:
            return await recall(envelope)
        user = sender_id(envelope)
        await settle(user)
        if asked is Asked.FORGET_LAST:
            last = await facts.last_heard(user)
            if last is None:
                return "I haven't kept anything from what you said, so there is nothing to forget. /memory lists " \
                       "what I remember."
            await facts.forget(user, key=last.key, role=EVERY_ROLE)
            return f"Forgotten: {last.key} ({last.quoted}). /memory lists what I still remember."
        return await forget_all(user)

    host.register_command("memory", memory, "/memory: what the board remembers about you")
    host.register_command("forget", forget, "/forget <key>|all: make the board forget a fact about you")
    return talk

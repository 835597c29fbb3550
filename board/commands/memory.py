"""Chat commands about user memory: ``/memory`` and ``/forget``.

``/memory`` lists what the board remembers about the sender (every role's facts, each
under the role that was told), ``/forget <key>`` deletes that fact from every role's
memory of the sender and ``/forget all`` deletes everything about them. A sender only
ever sees and deletes their own facts; the owner manages everyone's with ``sabha memory``.
"""

from __future__ import annotations

from itertools import groupby

from board.budget import sender_id
from board.commands.host import CommandHost
from board.envelope import Envelope
from board.memory.facts import FactStore, normalise_key
from board.router import Route

__all__ = ["register"]


def register(host: CommandHost, facts: FactStore) -> None:
    """Add ``/memory`` and ``/forget`` to ``host``."""

    async def memory(envelope: Envelope, route: Route) -> str:
        known = await facts.facts(user=sender_id(envelope))
        if not known:
            return ("I don't remember anything about you yet. When you tell an advisor something worth keeping "
                    "(your name, your currency, a constraint), they save it; /memory lists it and /forget drops it.")
        lines = ["What the board remembers about you:"]
        for role, group in groupby(known, key=lambda f: f.role):
            lines.append(f"{role}:")
            lines.extend(f"  - {f.key}: {f.value}" for f in group)
        lines.append("Every advisor sees all of these." if facts.settings.cross_role
                     else "Each advisor sees only what you told them.")
        lines.append("/forget <key> drops a fact; /forget all drops everything.")
        return "\n".join(lines)

    async def forget(envelope: Envelope, route: Route) -> str:
        user = sender_id(envelope)
        arg = route.text.strip()
        if not arg:
            return "Usage: /forget <key> (see /memory for the keys), or /forget all"
        if arg.lower() == "all":
            count = await facts.forget(user)
            return f"Forgot everything about you ({count} fact(s))." if count else "There was nothing to forget."
        count = await facts.forget(user, key=arg)
        if not count:
            return f"I don't remember anything under {normalise_key(arg)!r}; /memory lists the keys."
        return f"Forgot {normalise_key(arg)!r}" + (f" ({count} advisors had it)." if count > 1 else ".")

    host.register_command("memory", memory, "/memory: what the board remembers about you")
    host.register_command("forget", forget, "/forget <key>|all: make the board forget a fact about you")

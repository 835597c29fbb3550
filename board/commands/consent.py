"""``/allow [n] [always]`` and ``/deny [n]``: the owner's answer to an advisor that wants to run a tool that
changes the world (:mod:`board.tools.consent`). The question's Allow once / Always allow this tool / Deny
buttons send these very commands.

Both are owner-only: a member's press or command is refused with one line and changes nothing (a stranger's
never gets past the access gate). Without a number they answer only the one call waiting whose question was
asked in the place the answer comes from; otherwise they list the waiting calls with their numbers. An answer
to a call already answered (or timed out) says so and changes nothing. The intake answers them beside the
conversation's lane (:func:`board.tools.consent.consent_lane`): the turn that waits for the answer holds that
lane.
"""

from __future__ import annotations

from board.commands.host import CommandHost
from board.envelope import Envelope
from board.routing.router import Route
from board.schedule.work import Place
from board.tools.consent import Answer, OwnerConsent

__all__ = ["register"]

USAGE = "Use /allow <n> (once), /allow <n> always (this tool from now on) or /deny <n>."


def _words(text: str) -> tuple[int | None, list[str]] | None:
    """(the number, the other words) of ``/allow``'s or ``/deny``'s text; None when the number is not one."""
    words = text.split()
    number: int | None = None
    if words and words[0].lstrip("#").isdigit():
        number = int(words.pop(0).lstrip("#"))
    elif words and words[0].lower() != "always":
        return None
    return number, [w.lower() for w in words]


def register(host: CommandHost, consent: OwnerConsent) -> None:
    """Add ``/allow`` and ``/deny`` on ``consent`` to ``host``."""

    async def allow(envelope: Envelope, route: Route) -> str:
        read = _words(route.text)
        if read is None or any(w != "always" for w in read[1]):
            return f"I could not read that. {USAGE}"
        number, rest = read
        answer = Answer.ALWAYS_ALLOWED if rest else Answer.ALLOWED_ONCE
        decided = await consent.decide(number, answer, by=f"{envelope.channel}:{envelope.sender}",
                                       place=Place(envelope.channel, envelope.chat_id, envelope.thread_id))
        return decided.text

    async def deny(envelope: Envelope, route: Route) -> str:
        read = _words(route.text)
        if read is None or read[1]:
            return f"I could not read that. {USAGE}"
        decided = await consent.decide(read[0], Answer.DENIED, by=f"{envelope.channel}:{envelope.sender}",
                                       place=Place(envelope.channel, envelope.chat_id, envelope.thread_id))
        return decided.text

    host.register_command("allow", allow, "/allow [n] [always]: let an advisor run the tool call it asked for",
                          owner_only=True)
    host.register_command("deny", deny, "/deny [n]: refuse an advisor's tool call", owner_only=True)

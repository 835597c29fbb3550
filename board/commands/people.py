"""Chat commands that link accounts: ``/link``, ``/link CODE`` and ``/unlink``.

``/link`` and ``/link CODE`` work only in a direct chat (in a group both are refused before any
code is used: a channel may not know the owner there). ``/link`` answers a one-time code;
``/link CODE`` sent from another account (another channel) makes the two one person; ``/unlink``
takes this account out again. Every refusal says why and what to do. The rules (single use,
expiry, failure limit, the owner's accounts only with each other) are
:func:`board.people.rows.redeem`'s.
"""

from __future__ import annotations

from board.commands.host import CommandHost
from board.envelope import Envelope
from board.people.people import People, identity_of
from board.people.rows import LinkOutcome, LinkResult
from board.routing.router import Route

__all__ = ["register", "ttl_text"]

AGAIN = "Send /link on your other account for a new one."


def ttl_text(seconds: int) -> str:
    """``600`` -> ``10 minutes``, ``90`` -> ``90 seconds``."""
    if seconds % 60 == 0:
        minutes = seconds // 60
        return f"{minutes} minute{'s' if minutes != 1 else ''}"
    return f"{seconds} seconds"


def _channel(identity: str | None) -> str:
    return (identity or "").split(":", 1)[0] or "other"


def outcome_text(result: LinkResult, envelope: Envelope, ttl_s: int) -> str:
    """What the sender of ``/link CODE`` is told."""
    kind = result.outcome
    if kind is LinkOutcome.LINKED:
        return (f"Linked: this {envelope.channel} account and your {_channel(result.other)} account are now one "
                "person. The advisors remember what you tell them on either, and your daily budget counts both. "
                "Send /unlink here to undo it.")
    texts = {
        LinkOutcome.ALREADY: "These two accounts are already linked.",
        LinkOutcome.WRONG: f"That link code is wrong. Check it and send it again, or: {AGAIN}",
        LinkOutcome.REUSED: f"That link code was already used (each code works once). {AGAIN}",
        LinkOutcome.EXPIRED: f"That link code has expired (codes last {ttl_text(ttl_s)}). {AGAIN}",
        LinkOutcome.OWN_CODE: "That is this account's own code: send it from your other account.",
        LinkOutcome.OWNER_ONLY: "That code was asked for by the board's owner and only links the owner's own "
                                "accounts; it no longer works.",
        LinkOutcome.OWNER_SIDE: "You are the board's owner: link only codes from your own accounts (or use "
                                "`sabha people link`). That code no longer works.",
        LinkOutcome.TOO_MANY: "One of these accounts has already been linked too often today (people."
                              "link_max_per_day). Try again tomorrow.",
        LinkOutcome.LINKED_ELSEWHERE: "Both accounts are already linked to other accounts. Send /unlink on one "
                                      "of them first, then link again.",
    }
    if kind is LinkOutcome.LOCKED:
        minutes = max(1, round(result.retry_in_s / 60))
        return (f"Too many wrong link codes from this account. Try again in {minutes} minute"
                f"{'s' if minutes != 1 else ''}.")
    return texts[kind]


def register(host: CommandHost, people: People) -> None:
    """Add ``/link`` and ``/unlink`` to ``host``."""

    async def link(envelope: Envelope, route: Route) -> str:
        ttl = people.settings.link_code_ttl_s
        typed = route.text.strip()
        if envelope.is_group:  # before any code is used: a group's sender is never taken for the owner
            return (f"Send /link{' CODE' if typed else ''} in a direct chat with me, not in a group: the code "
                    "is for you alone.")
        if typed:
            result = await people.redeem(identity_of(envelope), typed, is_owner=envelope.is_owner)
            return outcome_text(result, envelope, ttl)
        code = await people.ask_code(identity_of(envelope), is_owner=envelope.is_owner)
        return (f"Your link code: {code}\nWithin {ttl_text(ttl)}, send /link {code} from your other account "
                "(Telegram, WhatsApp or the terminal) to make the two one person: one memory and one budget. "
                "The code works once. /unlink undoes a link.")

    async def unlink(envelope: Envelope, route: Route) -> str:
        result = await people.unlink(identity_of(envelope))
        if result is None:
            return "This account is not linked to another one (/link links it)."
        _, left = result
        return (f"Unlinked: this account is on its own again and starts afresh here. What you told the board "
                f"stays with your other account{'s' if len(left) > 1 else ''} ({', '.join(left)}).")

    host.register_command("link", link, "/link [code]: make your accounts on other channels one person")
    host.register_command("unlink", unlink, "/unlink: undo /link for this account")

"""The SQL of linking, as async functions of one transaction (:class:`board.storage.Tx`).

Each function runs inside ``async with db.transaction() as tx`` after :func:`serialised`, which makes
link work one at a time across every replica (SQLite: ``BEGIN IMMEDIATE`` holds the write lock;
PostgreSQL: a transaction-scoped advisory lock), so checking a code and marking it used, or counting
failures and recording one, cannot interleave with another redemption: a code works once even when two
accounts send it at the same moment, on one replica or two. They return what
happened (:class:`LinkResult`); the facts to move from an identity's old key to the person's key are
listed in ``moves`` and moved by the caller after the commit (:class:`board.people.People`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum

from board.people.codes import code_hash, normalise_code
from board.people.ref import person_key
from board.people.settings import PeopleSettings
from board.storage.database import Dialect, Tx

__all__ = ["LINK_LOCK", "LinkOutcome", "LinkResult", "Member", "issue", "join", "member", "redeem", "serialised",
           "unlink"]

#: The PostgreSQL advisory lock key that makes link work one at a time across replicas.
LINK_LOCK = 0x5AB4A11


class LinkOutcome(StrEnum):
    """What ``/link CODE`` (or ``sabha people link``) did."""

    LINKED = "linked"
    ALREADY = "already"  # the two were one person already
    WRONG = "wrong"  # no such code
    REUSED = "reused"  # the code was used before
    EXPIRED = "expired"
    OWN_CODE = "own_code"  # sent from the account that asked for it
    OWNER_ONLY = "owner_only"  # the owner's code, from an account that is not the owner's: refused, code void
    OWNER_SIDE = "owner_side"  # the owner, with a code that is not the owner's: refused, code void
    LINKED_ELSEWHERE = "linked_elsewhere"  # both sides already belong to different linked people
    LOCKED = "locked"  # too many failures from this account lately
    TOO_MANY = "too_many"  # one of the two accounts already linked people.link_max_per_day times today


#: Outcomes that count against the account's failure limit.
FAILURES = frozenset({LinkOutcome.WRONG, LinkOutcome.REUSED, LinkOutcome.EXPIRED, LinkOutcome.OWNER_ONLY,
                      LinkOutcome.OWNER_SIDE})


@dataclass(frozen=True)
class LinkResult:
    """An outcome, the person linked to (if any), the identity on the other side, the facts to move."""

    outcome: LinkOutcome
    person: int | None = None
    other: str | None = None
    retry_in_s: float = 0.0
    moves: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Member:
    """An identity's person: its number, how many identities it has, whether it is the owner's."""

    person: int
    size: int
    owner: bool


async def serialised(tx: Tx, dialect: Dialect) -> None:
    """Make the rest of ``tx`` the only link work running: on PostgreSQL take :data:`LINK_LOCK` (held until
    the transaction ends); SQLite's ``BEGIN IMMEDIATE`` already holds the one write lock."""
    if dialect is Dialect.POSTGRES:
        await tx.execute("SELECT pg_advisory_xact_lock(?)", (LINK_LOCK,))


def _iso(now: float) -> str:
    return datetime.fromtimestamp(now, UTC).isoformat(timespec="seconds")


async def member(tx: Tx, identity: str) -> Member | None:
    """The person ``identity`` is linked to, or None (a person of its own)."""
    row = await tx.fetchone(
        "SELECT i.person, (SELECT COUNT(*) FROM people_identities j WHERE j.person = i.person) AS size, p.owner "
        "FROM people_identities i JOIN people p ON p.id = i.person WHERE i.identity = ?", (identity,))
    return None if row is None else Member(int(row["person"]), int(row["size"]), bool(row["owner"]))


async def issue(tx: Tx, identity: str, code: str, *, owner: bool, now: float, ttl_s: int) -> None:
    """Store ``code`` (its hash) for ``identity``; the account's earlier unused codes stop working."""
    await tx.execute("DELETE FROM people_link_codes WHERE identity = ? AND used_at IS NULL", (identity,))
    await tx.execute("DELETE FROM people_link_codes WHERE expires_at < ?", (now - 86400,))
    await tx.execute("DELETE FROM people_link_failures WHERE at < ?", (now - 86400,))
    owner = owner or bool((m := await member(tx, identity)) and m.owner)
    await tx.execute("INSERT INTO people_link_codes(code_hash, identity, owner, created_at, expires_at) "
                 "VALUES (?, ?, ?, ?, ?)", (code_hash(code), identity, int(owner), now, now + ttl_s))


async def join(tx: Tx, a: str, b: str, *, owner: bool, now: float) -> LinkResult:
    """Make ``a`` and ``b`` one person (``a``'s, unless only ``b`` already has others linked). The caller
    has checked that they are not both linked to different people."""
    ma, mb = await member(tx, a), await member(tx, b)
    if mb is not None and mb.size > 1 and not (ma is not None and ma.size > 1):
        a, b, ma, mb = b, a, mb, ma
    moves: list[tuple[str, str]] = []
    if ma is None:
        made = await tx.fetchone("INSERT INTO people(owner, created_at) VALUES (?, ?) RETURNING id",
                                 (int(owner), _iso(now)))
        assert made is not None  # an INSERT ... RETURNING returns its row
        number = int(made["id"])
        await tx.execute("INSERT INTO people_identities(identity, person, linked_at) VALUES (?, ?, ?)",
                     (a, number, _iso(now)))
        moves.append((a, person_key(number)))
    else:
        number = ma.person
        if owner:
            await tx.execute("UPDATE people SET owner = 1 WHERE id = ?", (number,))
    await tx.execute("INSERT INTO people_identities(identity, person, linked_at) VALUES (?, ?, ?) "
                 "ON CONFLICT(identity) DO UPDATE SET person = excluded.person, linked_at = excluded.linked_at, "
                 "last_text = NULL, last_at = NULL", (b, number, _iso(now)))
    if mb is not None and mb.size == 1:  # b was alone in a person (left after an unlink): it is empty now
        await tx.execute("DELETE FROM people WHERE id = ?", (mb.person,))
    moves.append((person_key(mb.person) if mb is not None else b, person_key(number)))
    return LinkResult(LinkOutcome.LINKED, person=number, other=a, moves=tuple(moves))


async def _failed(tx: Tx, identity: str, outcome: LinkOutcome, now: float) -> LinkResult:
    await tx.execute("INSERT INTO people_link_failures(identity, at) VALUES (?, ?)", (identity, now))
    return LinkResult(outcome)


async def _links_today(tx: Tx, identity: str, now: float) -> int:
    """Links ``identity`` made in the last 24 hours, asking or redeeming (an unlink does not give one back)."""
    row = await tx.fetchone("SELECT COUNT(*) AS n FROM people_link_codes WHERE used_at > ? "
                            "AND used_by NOT LIKE 'refused:%' AND (identity = ? OR used_by = ?)",
                            (now - 86400, identity, identity))
    return 0 if row is None else int(row["n"])


async def redeem(tx: Tx, typed: str, identity: str, *, is_owner: bool, now: float,
           settings: PeopleSettings) -> LinkResult:
    """``identity`` sends ``/link <typed>``: check the account's failure limit and the code, then link.

    The code binds to the account that asked for it. The owner's accounts link only with each other:
    a code the owner asked for is refused from any other account, and the owner may not redeem anyone
    else's (both void the code), so a stranger can never join the owner's memory or budget."""
    window = settings.failure_window_s
    failures = await tx.fetchone("SELECT COUNT(*) AS n, MIN(at) AS first FROM people_link_failures "
                                 "WHERE identity = ? AND at > ?", (identity, now - window))
    count, first = (int(failures["n"]), failures["first"]) if failures is not None else (0, None)
    if count >= settings.link_max_failures and first is not None:
        return LinkResult(LinkOutcome.LOCKED, retry_in_s=max(float(first) + window - now, 1.0))
    code = normalise_code(typed)
    if code is None:
        return await _failed(tx, identity, LinkOutcome.WRONG, now)
    hashed = code_hash(code)
    row = await tx.fetchone("SELECT identity, owner, expires_at, used_at FROM people_link_codes WHERE code_hash = ?",
                            (hashed,))
    if row is None:
        return await _failed(tx, identity, LinkOutcome.WRONG, now)
    asker, code_owner = str(row["identity"]), bool(row["owner"])
    expires_at, used_at = float(row["expires_at"]), row["used_at"]
    if used_at is not None:
        return await _failed(tx, identity, LinkOutcome.REUSED, now)
    if now >= expires_at:
        return await _failed(tx, identity, LinkOutcome.EXPIRED, now)
    if asker == identity:
        return LinkResult(LinkOutcome.OWN_CODE)
    ma, mb = await member(tx, asker), await member(tx, identity)
    asker_owner = code_owner or bool(ma and ma.owner)
    if asker_owner != (is_owner or bool(mb and mb.owner)):
        await tx.execute("UPDATE people_link_codes SET used_at = ?, used_by = ? WHERE code_hash = ?",
                     (now, f"refused:{identity}", hashed))
        return await _failed(tx, identity, LinkOutcome.OWNER_ONLY if asker_owner else LinkOutcome.OWNER_SIDE, now)
    if ma is not None and mb is not None and ma.person == mb.person:
        return LinkResult(LinkOutcome.ALREADY, person=ma.person, other=asker)
    if ma is not None and mb is not None and ma.size > 1 and mb.size > 1:
        return LinkResult(LinkOutcome.LINKED_ELSEWHERE)
    if max(await _links_today(tx, asker, now), await _links_today(tx, identity, now)) >= settings.link_max_per_day:
        return LinkResult(LinkOutcome.TOO_MANY)  # the code stays usable tomorrow, while it lasts
    await tx.execute("UPDATE people_link_codes SET used_at = ?, used_by = ? WHERE code_hash = ?",
                     (now, identity, hashed))
    done = await join(tx, asker, identity, owner=asker_owner, now=now)
    return LinkResult(LinkOutcome.LINKED, person=done.person, other=asker, moves=done.moves)


async def unlink(tx: Tx, identity: str) -> tuple[int, tuple[str, ...]] | None:
    """Take ``identity`` out of its person: (the person, the identities left), or None when it was not
    linked to another. The person keeps its memory; the identity is a person of its own again."""
    found = await member(tx, identity)
    if found is None or found.size < 2:
        return None
    await tx.execute("DELETE FROM people_identities WHERE identity = ?", (identity,))
    left = await tx.fetchall("SELECT identity FROM people_identities WHERE person = ? ORDER BY identity",
                             (found.person,))
    return found.person, tuple(str(r["identity"]) for r in left)

"""User memory: the facts a role keeps about a user, and the ``remember`` tool that saves them.

A fact is ``(user, role, key) -> value`` in the state db's ``memory_facts`` table (seed 001
§6: persistent facts per user and binding). ``user`` is the sender as the ledger records
it (``<channel>:<sender id>``), ``role`` the role that was told. :meth:`FactStore.recall`
gives the facts a turn may see: the role's own, plus every other role's about the same
user when the owner turns on ``memory.cross_role``. The runner puts them in the per-turn
dynamic block of the prompt (never the cached static one), each value JSON-quoted under
a line saying it is data about the user, not instructions.

Keys are short labels (lowercased, whitespace folded); values one line. A role keeps at
most ``max_facts_per_role`` facts per user, counted over every scope: saving one more drops the least
recently updated, wherever it was kept. Secrets (passwords, card numbers, one-time codes, keys) are refused.
``/memory`` and ``/forget`` (:mod:`board.commands.memory`) and ``sabha memory`` list and
delete them.

Facts also write themselves (issue 26): after a turn, :mod:`board.memory.extract` asks the
cheap model what durable facts the person stated and :meth:`FactStore.learn` keeps them under
:data:`EVERY_ROLE` (every advisor sees them): the same key, or the same value under another
key, updates the fact instead of adding one (a correction replaces), at most
``max_facts_per_user`` are kept per person over every scope (the least recently updated goes), and each carries where it
came from (``source``, the transcript entry, the channel's message id, the session; migration
0710). Secrets are refused by pattern (:func:`board.language.secrets.secret_reason`).

Each fact carries where it was learned, its scope (:func:`board.conversation.scope.scope_of`, migration
0970): ``direct`` (a direct chat, the web page, the terminal: private to the person) or
``group:<channel>:<chat id>`` (a group or a forum, whose members read every answer).
:meth:`FactStore.recall` gives a turn only the facts of its own scope: a group turn never sees what the
person said in a direct chat (nor in another group), and a fact saved in a group stays in that group.
Facts kept before scopes existed count as direct.

Consolidation (:mod:`board.memory.consolidation`, migration 1300) tidies the facts heard from a person; it never
changes one that is the person's own word (:attr:`Fact.fixed`): corrected by them (heard again with a new value:
``corrected_at``), saved by an advisor with the remember tool, or written by the owner. :meth:`FactStore.forget`
leaves a mark of what was forgotten and when (``memory_forgets``), so an undo of a consolidation never brings it back.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from board.agent.tools import Tool, ToolContext, ToolResult
from board.conversation.scope import DIRECT, scope_of
from board.language.statements import secret_reason
from board.llm.base import ToolSpec
from board.memory.consolidation.settings import ConsolidationSettings
from board.spending.budget import sender_id
from board.storage import Database, Row
from board.storage.sql import RowJoin

__all__ = ["EVERY_ROLE", "PROFILE_KEY", "REMEMBER_TOOL", "Fact", "FactError", "FactSource", "FactStore", "Learned",
           "MemorySettings", "ProfileLine", "Provenance", "normalise_key"]

log = logging.getLogger("sabha.memory")

REMEMBER_TOOL = "remember"
#: The ``role`` of a fact the board heard the person say: every advisor sees it.
EVERY_ROLE = "*"
#: The key the person's consolidated profile shows under in the per-turn block, first among their facts.
PROFILE_KEY = "profile"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


class FactSource(StrEnum):
    """How a fact came to be kept."""

    TOOL = "tool"      # a role saved it with the remember tool
    HEARD = "heard"    # the board heard the person say it (memory.auto_extract)
    OWNER = "owner"    # the owner wrote it (sabha memory edit)


@dataclass(frozen=True)
class Provenance:
    """Where a fact came from: the transcript entry of the person's message, the channel's id
    of that message (``<channel>:<id>``), the session it was said in."""

    source: FactSource = FactSource.TOOL
    entry: str | None = None
    message: str | None = None
    session: str | None = None


class FactError(ValueError):
    """A fact cannot be saved; ``str()`` says why."""


@dataclass(frozen=True)
class MemorySettings:
    """``memory:`` in the config, as plain values."""

    enabled: bool = True
    cross_role: bool = False
    max_facts_per_role: int = 50
    recall_limit: int = 30
    auto_extract: bool = True
    max_facts_per_user: int = 100
    extract_concurrency: int = 2
    extract_per_hour: int = 30  # extraction calls per person in any hour; 0: no cap
    max_key_chars: int = 64
    max_value_chars: int = 300
    consolidation: ConsolidationSettings = field(default_factory=ConsolidationSettings)


@dataclass(frozen=True)
class Fact:
    """One remembered fact. ``origin`` is what a prompt shows after it (which other role was told)."""

    user: str
    role: str
    key: str
    value: str
    updated_at: str
    origin: str = ""
    provenance: Provenance = Provenance()
    scope: str = DIRECT
    corrected_at: str | None = None  # when the person corrected it (said it again with a new value)

    @property
    def fixed(self) -> bool:
        """The person's own word (corrected by them, saved with the remember tool, written by the owner):
        consolidation never changes it."""
        return self.corrected_at is not None or self.provenance.source is not FactSource.HEARD

    @property
    def quoted(self) -> str:
        """The value as a JSON string: one line, quotes escaped, clearly a value."""
        return json.dumps(self.value, ensure_ascii=False)


@dataclass(frozen=True)
class ProfileLine:
    """The person's short profile (kept by consolidation, ``memory_profiles``) as the per-turn block shows it: one
    JSON-quoted line among their facts, with a note that it is the board's summary. Its words are derived from
    what the person said (outside words, rewritten by a model): quoted, never read as instructions."""

    text: str
    key: str = PROFILE_KEY
    origin: str = " (the board's summary of what they told you)"

    @property
    def quoted(self) -> str:
        """The profile as a JSON string: one line, quotes escaped, clearly a value."""
        return json.dumps(self.text, ensure_ascii=False)


def normalise_key(key: str) -> str:
    """A fact's key as stored: lowercased, control characters dropped, whitespace folded."""
    return " ".join(_CONTROL.sub(" ", key).split()).lower()


def _one_line(value: str) -> str:
    return " ".join(_CONTROL.sub(" ", value).split())


@dataclass(frozen=True)
class Learned:
    """What :meth:`FactStore.learn` did: the fact kept, the one it replaced (an earlier value of the same
    fact), the one dropped to make room; ``changed`` is False when the fact was already known as is."""

    fact: Fact
    replaced: Fact | None = None
    dropped: Fact | None = None
    changed: bool = True


def _now() -> str:
    """Microseconds, so two facts heard in the same second still have an order ("forget that")."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _row(row: Any) -> Fact:
    keys = row.keys()
    where = Provenance(source=FactSource(row["source"]) if "source" in keys else FactSource.TOOL,
                       entry=row["source_entry"] if "source_entry" in keys else None,
                       message=row["source_message"] if "source_message" in keys else None,
                       session=row["source_session"] if "source_session" in keys else None)
    return Fact(user=row["user"], role=row["role"], key=row["key"], value=row["value"], updated_at=row["updated_at"],
                provenance=where, scope=row["scope"] if "scope" in keys else DIRECT,
                corrected_at=row["corrected_at"] if "corrected_at" in keys else None)


#: The orders of a turn's facts (:meth:`FactStore.recall`), each written over the facts table and over the
#: alias ``f`` of the folded statement: two named strings, never one rewritten into the other. Cross-role: the
#: asking role's facts first (its slug is the ``?``); then the newest first.
_ROLE_FIRST = "(role = ?) DESC, updated_at DESC, id DESC"
_ROLE_FIRST_OF_F = "(f.role = ?) DESC, f.updated_at DESC, f.id DESC"
_NEWEST = "updated_at DESC, id DESC"
_NEWEST_OF_F = "f.updated_at DESC, f.id DESC"


class FactStore:
    """Reads and writes ``memory_facts``; see the module docstring."""

    def __init__(self, db: Database, settings: MemorySettings | None = None) -> None:
        self.db = db
        self.settings = settings or MemorySettings()

    def check(self, key: str, value: str) -> tuple[str, str]:
        """The key and value as they would be stored; :class:`FactError` when they may not be."""
        s = self.settings
        raw_key, key, value = key, normalise_key(key), _one_line(value)
        if not key:
            raise FactError("the key is empty; use a short label such as 'preferred currency'")
        if len(key) > s.max_key_chars:
            raise FactError(f"the key is {len(key)} characters; keep it under {s.max_key_chars}")
        if not value:
            raise FactError("the value is empty; to drop a fact the user can send /forget <key>")
        if len(value) > s.max_value_chars:
            raise FactError(f"the value is {len(value)} characters; keep it under {s.max_value_chars} "
                            "(save the gist, not the whole message)")
        if secret_reason(raw_key, value) or secret_reason(key, value):  # the raw key keeps "doorCode" apart
            raise FactError("that looks like a secret (a password, code, key or card number); secrets are never "
                            "stored: tell the user so")
        return key, value

    async def remember(self, user: str, role: str, key: str, value: str,
                       scope: str = DIRECT) -> tuple[Fact, Fact | None]:
        """Save (or update) a fact, seen in ``scope`` only; returns it and the fact dropped to make room, if any
        (the role's least recently updated fact about ``user``, in any scope: the cap is per person)."""
        key, value = self.check(key, value)
        now = _now()
        dropped: Fact | None = None
        existing = await self.db.fetchone(
            "SELECT id FROM memory_facts WHERE \"user\"=? AND role=? AND key=? AND scope=?", (user, role, key, scope))
        if existing is None:
            rows = await self.db.fetchall(  # every scope's: the cap is the person's, not one group's
                "SELECT * FROM memory_facts WHERE \"user\"=? AND role=? ORDER BY updated_at, id", (user, role))
            if len(rows) >= self.settings.max_facts_per_role:
                dropped = _row(rows[0])
        drop_id = rows[0]["id"] if dropped is not None else None

        async with self.db.transaction() as tx:  # one transaction: never the drop without the new fact
            if drop_id is not None:
                await tx.execute("DELETE FROM memory_facts WHERE id=?", (drop_id,))
            await tx.execute(
                'INSERT INTO memory_facts("user", role, key, value, created_at, updated_at, scope) '
                "VALUES (?, ?, ?, ?, ?, ?, ?) "
                'ON CONFLICT("user", role, key, scope) DO UPDATE SET value=excluded.value, '
                "updated_at=excluded.updated_at",
                (user, role, key, value, now, now, scope))
        log.info("memory: %s remembers %r about %s (%s)%s", role, key, user, scope,
                 f" (dropped {dropped.key!r} to make room)" if dropped else "")
        return Fact(user, role, key, value, now, scope=scope), dropped

    async def learn(self, user: str, key: str, value: str, where: Provenance, scope: str = DIRECT) -> Learned:
        """Keep a fact the person stated, for every advisor, seen in ``scope`` (see the module docstring): an
        update of the fact under the same key (or holding the same value), else a new one, the least recently
        updated dropped past ``max_facts_per_user`` (the person's, in any scope: facts heard in many groups
        stay within it). :class:`FactError` when it may not be kept."""
        key, value = self.check(key, value)
        rows = await self.db.fetchall(
            "SELECT * FROM memory_facts WHERE \"user\"=? AND role=? ORDER BY updated_at, id", (user, EVERY_ROLE))
        every = [_row(r) for r in rows]
        known = [f for f in every if f.scope == scope]
        same = next((f for f in known if f.key == key), None) or \
            next((f for f in known if f.value.casefold() == value.casefold()), None)
        if same is not None and same.value == value:
            return Learned(same, changed=False)
        dropped = every[0] if same is None and len(every) >= self.settings.max_facts_per_user else None
        now = _now()
        params = (value, where.source.value, where.entry, where.message, where.session, now)

        async with self.db.transaction() as tx:  # one transaction: never the drop without the new fact
            if dropped is not None:
                await tx.execute('DELETE FROM memory_facts WHERE "user"=? AND role=? AND key=? AND scope=?',
                                 (user, EVERY_ROLE, dropped.key, dropped.scope))
            if same is not None:  # the person said it again with a new value: their correction (fixed)
                await tx.execute("UPDATE memory_facts SET value=?, source=?, source_entry=?, source_message=?, "
                                 'source_session=?, updated_at=?, corrected_at=? '
                                 'WHERE "user"=? AND role=? AND key=? AND scope=?',
                                 (*params, now, user, EVERY_ROLE, same.key, scope))
            else:
                await tx.execute("INSERT INTO memory_facts(value, source, source_entry, source_message, "
                                 'source_session, updated_at, created_at, "user", role, key, scope) '
                                 "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                 (*params, now, user, EVERY_ROLE, key, scope))
        fact = Fact(user, EVERY_ROLE, same.key if same is not None else key, value, now, provenance=where, scope=scope,
                    corrected_at=now if same is not None else None)
        log.info("memory: heard %r about %s%s%s", fact.key, user, " (updated)" if same is not None else "",
                 f" (dropped {dropped.key!r} to make room)" if dropped else "")
        return Learned(fact, replaced=same, dropped=dropped)

    async def last_heard(self, user: str) -> Fact | None:
        """The fact most recently heard from ``user`` (what "forget that" forgets), or None."""
        row = await self.db.fetchone(
            "SELECT * FROM memory_facts WHERE \"user\"=? AND source=? ORDER BY updated_at DESC, id DESC LIMIT 1",
            (user, FactSource.HEARD.value))
        return _row(row) if row is not None else None

    async def edit(self, user: str, key: str, value: str, role: str | None = None) -> int:
        """Give ``user``'s fact ``key`` (in ``role``, or wherever it is kept) a new value, as the owner
        wrote it; returns how many were changed. :class:`FactError` when the value may not be kept."""
        key, value = self.check(key, value)
        sql = "UPDATE memory_facts SET value=?, source=?, updated_at=? WHERE \"user\"=? AND key=?"
        params: list[Any] = [value, FactSource.OWNER.value, _now(), user, key]
        if role is not None:
            sql += " AND role=?"
            params.append(role)
        count = len(await self.db.fetchall(sql + " RETURNING id", tuple(params)))
        if count:
            log.info("memory: the owner edited %r about %s", key, user)
        return count

    async def recall(self, user: str, role: str, scope: str = DIRECT) -> tuple[Fact | ProfileLine, ...]:
        """The facts a turn of ``role`` for ``user`` in ``scope`` sees (see the module docstring), newest
        first: only those learned in that same scope (a group never sees a direct chat's); in a direct scope the
        person's consolidated profile first (:meth:`profile_line`). One statement: a direct turn's profile is read
        in the facts' own (a turn's reads are round trips to the database's thread; issue 44)."""
        recalled, _ = await self.recall_with(user, role, scope)
        return recalled

    async def recall_with(self, user: str, role: str, scope: str = DIRECT, also: RowJoin | None = None
                          ) -> tuple[tuple[Fact | ProfileLine, ...], Row | None]:
        """:meth:`recall`, and the row ``also`` joins (another owner's read carried in the same statement: the
        turn's session, :meth:`board.conversation.sessions.Sessions.live_join`), read from the first row (None
        without ``also``). One row at least comes back (from ``(SELECT 1)``), with NULL facts when there are none,
        so the profile and the joined row are read either way."""
        limit = self.settings.recall_limit
        params: tuple[Any, ...]
        if self.settings.cross_role:
            where, params = 'WHERE "user"=? AND scope=?', (user, scope)
            order, order_of_f = _ROLE_FIRST, _ROLE_FIRST_OF_F
            ordered: tuple[Any, ...] = (role,)
        else:
            where, params = 'WHERE "user"=? AND scope=? AND role IN (?, ?)', (user, scope, role, EVERY_ROLE)
            order, order_of_f = _NEWEST, _NEWEST_OF_F
            ordered = ()
        facts_sql = f"SELECT * FROM memory_facts {where} ORDER BY {order} LIMIT ?"
        direct = scope == DIRECT  # no profile in a group (see profile_line)
        if not direct and also is None:
            rows = await self.db.fetchall(facts_sql, (*params, *ordered, limit))
            return self._scoped(rows, role), None
        # One row per fact (at most ``limit``), each carrying the profile's text and the joined row
        profile_sql = ("p.text", 'LEFT JOIN memory_profiles p ON p."user" = ? ') if direct else ("NULL", "")
        rows = await self.db.fetchall(
            f"SELECT {also.columns + ', ' if also else ''}{profile_sql[0]} AS profile_text, f.* "
            f"FROM (SELECT 1 AS one) o {also.join + ' ' if also else ''}{profile_sql[1]}"
            f"LEFT JOIN ({facts_sql}) f ON TRUE ORDER BY {order_of_f}",
            (*(also.params if also else ()), *((user,) if direct else ()), *params, *ordered, limit, *ordered))
        first = rows[0] if rows else None
        profile = self._profile_of(first["profile_text"] if first is not None else None) if direct else None
        facts = self._scoped([r for r in rows if r["id"] is not None], role)
        return (*((profile,) if profile else ()), *facts), first if also is not None else None

    async def profile_line(self, user: str, scope: str = DIRECT) -> ProfileLine | None:
        """``user``'s consolidated profile for a turn in ``scope``, at most ``memory.consolidation.profile_chars``
        characters on one line; None when they have none or the turn is not direct. The profile is made from the
        person's direct-chat facts only (:mod:`board.memory.consolidation`), so it follows their rule: a group
        turn, whose members read every answer, never gets it, and it is only ever the sender's own."""
        if scope != DIRECT:
            return None
        row = await self.db.fetchone('SELECT text FROM memory_profiles WHERE "user"=?', (user,))
        return self._profile_of(row["text"] if row is not None else None)

    def _profile_of(self, stored: str | None) -> ProfileLine | None:
        text = _one_line(str(stored or ""))
        if not text:
            return None
        limit = max(1, self.settings.consolidation.profile_chars)
        return ProfileLine(text if len(text) <= limit else text[: limit - 1].rstrip() + "\u2026")

    @staticmethod
    def _scoped(rows: Iterable[Any], role: str) -> tuple[Fact, ...]:
        facts = [_row(r) for r in rows]
        return tuple(f if f.role in (role, EVERY_ROLE) else replace(f, origin=f" (told to {f.role})") for f in facts)

    async def facts(self, user: str | None = None, role: str | None = None) -> list[Fact]:
        """Facts, optionally of one user and/or one role, by user, role and key."""
        sql, params = "SELECT * FROM memory_facts WHERE 1=1", []
        if user is not None:
            sql += " AND \"user\"=?"
            params.append(user)
        if role is not None:
            sql += " AND role=?"
            params.append(role)
        return [_row(r) for r in await self.db.fetchall(sql + ' ORDER BY "user", role, key', tuple(params))]

    async def move_user(self, old: str, new: str) -> int:
        """File ``old``'s facts under ``new`` (one person found under two ids). Where both have a fact
        under the same role and key, the newer one is kept under ``new`` and the other deleted: nothing
        stays under ``old``; consolidation's record of ``old`` (its changes, forget marks, profile unless ``new``
        has one) moves with them. Returns how many facts moved."""
        if old == new:
            return 0

        newer = "(o.updated_at > {t}.updated_at OR (o.updated_at = {t}.updated_at AND o.id > {t}.id))"
        async with self.db.transaction() as tx:
            await tx.execute(  # new's copy, where old's is newer
                'DELETE FROM memory_facts WHERE "user"=? AND EXISTS (SELECT 1 FROM memory_facts o WHERE o."user"=? '
                "AND o.role=memory_facts.role AND o.key=memory_facts.key AND o.scope=memory_facts.scope AND "
                + newer.format(t="memory_facts") + ")",
                (new, old))
            await tx.execute(  # old's copy, where new's is kept
                'DELETE FROM memory_facts WHERE "user"=? AND EXISTS (SELECT 1 FROM memory_facts n WHERE n."user"=? '
                "AND n.role=memory_facts.role AND n.key=memory_facts.key AND n.scope=memory_facts.scope)", (old, new))
            count = len(await tx.fetchall('UPDATE memory_facts SET "user"=? WHERE "user"=? RETURNING id', (new, old)))
            await tx.execute('UPDATE memory_changes SET "user"=? WHERE "user"=?', (new, old))
            await tx.execute('UPDATE memory_forgets SET "user"=? WHERE "user"=?', (new, old))
            await tx.execute('DELETE FROM memory_profiles WHERE "user"=? AND EXISTS (SELECT 1 FROM memory_profiles n '
                             'WHERE n."user"=?)', (old, new))
            await tx.execute('UPDATE memory_profiles SET "user"=? WHERE "user"=?', (new, old))
        if count:
            log.info("memory: %d fact(s) about %s are now about %s (the same person)", count, old, new)
        return count

    async def forget(self, user: str, key: str | None = None, role: str | None = None) -> int:
        """Delete ``user``'s fact ``key`` (every fact when None), in ``role`` only or in every role;
        returns how many were deleted. The mark of what was forgotten is kept with it (one transaction), so an
        undo of a consolidation never brings it back."""
        sql, params = "DELETE FROM memory_facts WHERE \"user\"=?", [user]
        if key is not None:
            sql += " AND key=?"
            params.append(normalise_key(key))
        if role is not None:
            sql += " AND role=?"
            params.append(role)
        async with self.db.transaction() as tx:
            count = len(await tx.fetchall(sql + " RETURNING id", tuple(params)))
            await tx.execute('INSERT INTO memory_forgets("user", key, at) VALUES (?, ?, ?)',
                             (user, None if key is None else normalise_key(key), _now()))
        if count:
            log.info("memory: forgot %d fact(s) about %s%s%s", count, user, f" key {key!r}" if key else "",
                     f" in {role}" if role else "")
        return count

    # -- the tool ------------------------------------------------------------------

    def tool(self) -> Tool:
        """The ``remember`` tool: saves a fact about the user of the exchange for the calling role."""
        spec = ToolSpec(
            name=REMEMBER_TOOL,
            description=(
                "Save one fact about the person you are talking to (their name, role, preferences, constraints, "
                "decisions) so you still know it in later conversations; the same key overwrites. Save only what "
                "they told you and would expect you to keep, never secrets (passwords, card numbers, codes)."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "key": {"type": "string", "minLength": 1, "maxLength": self.settings.max_key_chars,
                            "description": "A short label, e.g. 'preferred currency'."},
                    "value": {"type": "string", "minLength": 1, "maxLength": self.settings.max_value_chars,
                              "description": "The fact, one line, e.g. 'INR'."},
                },
                "required": ["key", "value"],
                "additionalProperties": False,
            },
        )
        return Tool(spec, self._handle, timeout_s=15.0)

    async def _handle(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if ctx.envelope is None:
            return ToolResult.failure("there is no user in this exchange to remember anything about")
        user = sender_id(ctx.envelope)
        try:
            fact, dropped = await self.remember(user, ctx.role, str(args["key"]), str(args["value"]),
                                                scope_of(ctx.envelope))
        except FactError as exc:
            return ToolResult.failure(str(exc))
        data: dict[str, Any] = {"remembered": {"key": fact.key, "value": fact.value}}
        if dropped is not None:
            data["dropped"] = {"key": dropped.key, "reason": f"at most {self.settings.max_facts_per_role} facts "
                                                               "per user; the oldest was dropped"}
        return ToolResult.success(data)

"""A person's facts are capped per person, whatever the scopes they were learned in (review finding 8):
``learn()`` capped ``max_facts_per_user`` and ``remember()`` ``max_facts_per_role`` within one scope, so a
person's facts across many groups were unbounded. Past the cap the least recently updated fact goes, in
whichever scope it was kept."""

from __future__ import annotations

import pytest

from board.conversation.scope import DIRECT
from board.memory.facts import EVERY_ROLE, FactSource, FactStore, MemorySettings, Provenance
from board.storage import Database

pytestmark = pytest.mark.backends

HEARD = Provenance(FactSource.HEARD)


def group(n: int) -> str:
    return f"group:telegram:-100{n}"


async def test_facts_heard_in_many_groups_stay_within_the_persons_cap(database: Database) -> None:
    store = FactStore(database, MemorySettings(max_facts_per_user=3))
    await store.learn("tg:1", "home city", "Pune", HEARD, DIRECT)
    for n in range(4):
        learned = await store.learn("tg:1", f"offsite {n}", f"city {n}", HEARD, group(n))
    assert learned.dropped is not None and learned.dropped.key == "offsite 0"  # the least recently updated
    kept = await database.fetchall('SELECT key, scope FROM memory_facts WHERE "user"=? AND role=? ORDER BY key',
                                   ("tg:1", EVERY_ROLE))
    assert [(r["key"], r["scope"]) for r in kept] == [("offsite 1", group(1)), ("offsite 2", group(2)),
                                                       ("offsite 3", group(3))]
    again = await store.learn("tg:1", "offsite 3", "city 3", HEARD, group(3))
    assert not again.changed and again.dropped is None  # known as is: nothing dropped


async def test_facts_a_role_saves_in_many_groups_stay_within_its_cap(database: Database) -> None:
    store = FactStore(database, MemorySettings(max_facts_per_role=2))
    await store.remember("tg:1", "finance", "currency", "INR", DIRECT)
    await store.remember("tg:1", "finance", "budget", "10k", group(1))
    _fact, dropped = await store.remember("tg:1", "finance", "venue", "Goa", group(2))
    assert dropped is not None and (dropped.key, dropped.scope) == ("currency", DIRECT)
    kept = await database.fetchall('SELECT key FROM memory_facts WHERE "user"=? AND role=? ORDER BY key',
                                   ("tg:1", "finance"))
    assert [r["key"] for r in kept] == ["budget", "venue"]
    _fact, dropped = await store.remember("tg:1", "finance", "venue", "Kochi", group(2))  # an update
    assert dropped is None

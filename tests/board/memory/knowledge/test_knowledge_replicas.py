"""Replicas on one PostgreSQL sync the same workspace folder into the same knowledge tables at once: no document
is indexed twice, none is lost or left half-written, and an edit or a deletion seen by both is applied once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from board.app import BOARD_MIGRATIONS
from board.memory.knowledge.base import KnowledgeBase, KnowledgeSettings
from board.memory.knowledge.chunking import Chunk
from board.memory.knowledge.index import conversation_scope
from board.storage import Database, Dialect, StateURL, open_database
from bot.app import all_migrations
from tests.support.knowledge import write_doc

ON_POSTGRES = pytest.mark.parametrize("backend", [Dialect.POSTGRES], ids=["postgres"], indirect=True)
DOCS = 24


def _doc(n: int, word: str = "alpha") -> str:
    return (f"# Document {n}\n\n## Part one\n\nThe {word} plan number {n} covers pricing.\n\n"
            f"## Part two\n\nThe {word} budget number {n} covers hiring.\n")


@pytest.fixture
async def replicas(state_url: StateURL | None) -> AsyncIterator[tuple[Database, Database]]:
    """Two state stores on the test's PostgreSQL database, each its own pool, as two replicas hold them."""
    assert state_url is not None
    first = await open_database(state_url, [*BOARD_MIGRATIONS, *all_migrations()], pool_size=3)
    second = await open_database(state_url, [*BOARD_MIGRATIONS, *all_migrations()], pool_size=3)
    try:
        yield first, second
    finally:
        await first.close()
        await second.close()


async def _consistent(db: Database) -> list[str]:
    """The indexed paths, after checking each document's chunk count is its chunks' rows (none half-written)."""
    rows = await db.fetchall("SELECT d.path, d.chunks, (SELECT count(*) FROM knowledge_chunks c WHERE c.doc_id = d.id) "
                             "AS n FROM knowledge_documents d ORDER BY d.path")
    assert all(int(r["chunks"]) == int(r["n"]) for r in rows), [dict(r) for r in rows]
    orphans = await db.fetchone("SELECT count(*) AS n FROM knowledge_chunks c WHERE NOT EXISTS "
                                "(SELECT 1 FROM knowledge_documents d WHERE d.id = c.doc_id)")
    assert orphans is not None and int(orphans["n"]) == 0
    return [r["path"] for r in rows]


@ON_POSTGRES
async def test_two_replicas_syncing_one_folder_at_once_index_each_document_once(
        workspace: Path, data_dir: Path, replicas: tuple[Database, Database]) -> None:
    paths = [write_doc(workspace, f"shared/doc{n:02d}.md", _doc(n)) for n in range(DOCS)]
    one, two = (KnowledgeBase.open(workspace, data_dir, KnowledgeSettings(), db=db) for db in replicas)
    first, second = await asyncio.gather(one.sync(), two.sync())
    assert sorted(first.added + second.added) == [f"shared/doc{n:02d}.md" for n in range(DOCS)]  # each once
    assert first.unchanged + second.unchanged == DOCS  # what one added, the other found indexed
    assert await _consistent(replicas[0]) == [f"shared/doc{n:02d}.md" for n in range(DOCS)]
    assert await one.counts() == await two.counts() == (DOCS, DOCS * 2)  # two sections each
    assert not (data_dir / "knowledge.db").exists()  # no SQLite file: the index is the database's

    for n in range(0, 6):  # edited, and some deleted, while both replicas watch
        paths[n].write_text(_doc(n, "omega"), encoding="utf-8")
    for n in range(6, 9):
        paths[n].unlink()
    first, second = await asyncio.gather(one.sync(), two.sync())
    assert sorted(first.updated + second.updated) == [f"shared/doc{n:02d}.md" for n in range(6)]
    assert sorted(first.removed + second.removed) == [f"shared/doc{n:02d}.md" for n in range(6, 9)]
    assert len(await _consistent(replicas[1])) == DOCS - 3
    hits = await two.search("omega", role="research", limit=20)
    assert sorted({h.source for h in hits}) == [f"shared/doc{n:02d}.md" for n in range(6)]
    assert len(hits) == len({(h.source, h.heading) for h in hits})  # no chunk twice
    assert await one.search("alpha plan number 7", role="research", limit=20) != []
    assert all(h.source != "shared/doc07.md" for h in await one.search("alpha plan", role="research", limit=50))
    one.close()
    two.close()


@ON_POSTGRES
async def test_two_replicas_rebuilding_and_putting_one_attached_document_keep_one_copy(
        workspace: Path, data_dir: Path, replicas: tuple[Database, Database]) -> None:
    write_doc(workspace, "shared/pricing.md", _doc(1))
    one, two = (KnowledgeBase.open(workspace, data_dir, KnowledgeSettings(), db=db) for db in replicas)
    scope = conversation_scope("telegram", "42")
    chunks = [Chunk(heading="deck.pdf p.1", text="The deck says revenue grew in Lisbon.")]
    written = await asyncio.gather(*(kb.put_conversation_document(f"{scope}/abc/deck.pdf", scope, sha256="abc",
                                                                  size=10, chunks=chunks) for kb in (one, two)))
    assert sorted(written) == [0, 1]  # one wrote it, the other found the same content there
    await asyncio.gather(one.rebuild(), two.rebuild())
    assert await _consistent(replicas[0]) == ["shared/pricing.md"]
    assert [h.source for h in await one.search("Lisbon revenue", role=None, conversation=scope)] == []
    one.close()
    two.close()

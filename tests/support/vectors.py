"""Recall by meaning in tests: board settings whose ``memory.embedding_*`` point at the fake embeddings server
(:mod:`tests.support.fakes.embeddings_api`), and a pass that embeds everything indexed so far."""

from __future__ import annotations

from dataclasses import replace

from board.app import Board
from board.app.settings import BoardSettings
from board.recall.embedder import EmbeddingSettings
from tests.support.fakes.embeddings_api import FakeEmbeddings

__all__ = ["EMBEDDING_MODEL", "embed_all", "with_embeddings"]

#: Priced like OpenAI's small embedding model (the price table knows it), served by the fake.
EMBEDDING_MODEL = "openai:text-embedding-3-small"


def with_embeddings(settings: BoardSettings, fake: FakeEmbeddings, *, model: str = EMBEDDING_MODEL,
                    batch: int = 256, dimensions: int | None = None) -> BoardSettings:
    """``settings`` with recall by meaning on, served by ``fake``."""
    return replace(settings, recall_embedding=EmbeddingSettings(model=model, base_url=fake.base_url, api_key=fake.key,
                                                                batch=batch, dimensions=dimensions))


async def embed_all(board: Board) -> int:
    """Index what was said, then embed every passage (as the background passes would); how many were embedded."""
    while await board.parts.recall_indexer.run_once():
        pass
    vectors = board.parts.recall_vectors
    assert vectors is not None, "recall by meaning is off on this board"
    done = 0
    while added := await vectors.run_once():
        done += added
    return done

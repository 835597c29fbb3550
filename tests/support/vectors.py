"""Recall by meaning in tests: board settings whose ``memory.embedding_*`` point at the fake embeddings server
(:mod:`tests.support.fakes.embeddings_api`), a pass that embeds everything indexed so far, and a PostgreSQL with
pgvector.

Debian 12 has no pgvector package for its PostgreSQL 15, so the tests' PostgreSQL with pgvector is the one the
``pgserver`` package ships (PostgreSQL 16 and pgvector 0.6.2, built for manylinux, from PyPI; a test
dependency): :func:`pgvector_binaries` finds its bin folder for :func:`tests.support.pg.throwaway_cluster`.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

from board.app import Board
from board.app.settings import BoardSettings
from board.recall.embedder import EmbeddingSettings
from tests.support.ci import missing_part
from tests.support.fakes.embeddings_api import FakeEmbeddings

__all__ = ["EMBEDDING_MODEL", "embed_all", "pgvector_binaries", "with_embeddings"]

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


def pgvector_binaries() -> Path:
    """The bin folder of a PostgreSQL that has pgvector (``pgserver``'s); skips, or fails on CI, without it."""
    spec = importlib.util.find_spec("pgserver")  # found, not imported: only its binaries are used
    if spec is None or not spec.submodule_search_locations:
        missing_part("pgserver (PostgreSQL 16 with pgvector, from PyPI) is not installed: pip install -e '.[test]'")
    install = Path(next(iter(spec.submodule_search_locations))) / "pginstall"
    if not (install / "bin" / "initdb").exists():
        missing_part(f"pgserver has no PostgreSQL binaries in {install / 'bin'}")
    if os.geteuid() != 0:
        return install / "bin"
    # As root the cluster runs as the postgres user, who may not reach into the environment (a clone under /root):
    # a copy in the temporary folder, readable by all, made once per machine and version. The binaries find their
    # libraries at $ORIGIN/../../../pgserver.libs: the copy keeps that layout.
    copy = Path(tempfile.gettempdir()) / f"sabha-pgvector-{os.stat(install / 'bin' / 'postgres').st_mtime_ns}"
    if not (copy / "pgserver" / "pginstall" / "bin" / "initdb").exists():
        partial = Path(tempfile.mkdtemp(prefix="sabha-pgvector-"))
        shutil.copytree(install, partial / "pgserver" / "pginstall", symlinks=True)
        shutil.copytree(install.parent.parent / "pgserver.libs", partial / "pgserver.libs", symlinks=True)
        for path in (partial, *partial.rglob("*")):
            path.chmod(path.stat().st_mode | (0o555 if path.is_dir() or os.access(path, os.X_OK) else 0o444))
        with contextlib.suppress(OSError):  # another test process made it first: theirs is the same
            partial.rename(copy)
        shutil.rmtree(partial, ignore_errors=True)
    copy = copy / "pgserver" / "pginstall"
    return copy / "bin"

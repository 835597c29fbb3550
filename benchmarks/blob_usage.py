"""How full the media store is, asked before every download (the total quota): the walk against the
running total, at 20,000 small files.

Fills a temporary store with ``--files`` blobs, then times, in the same run, ``walk_usage`` (a walk of
every folder: what :meth:`board.media.blobs.BlobStore.usage` did on every call before) and
``BlobStore.usage`` after its first count (the running total). Prints both medians over ``--rounds``.

Usage: ``.venv/bin/python benchmarks/blob_usage.py [--files 20000] [--rounds 20]``.
It prints figures; it does not assert on time.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from board.media.blobs import BlobStore, DiskUsage, walk_usage  # noqa: E402

__all__ = ["main"]


def fill(root: Path, count: int) -> None:
    """``count`` small blobs (8 bytes each) in their folders."""
    for i in range(count):
        data = i.to_bytes(8, "big")
        sha = hashlib.sha256(data).hexdigest()
        folder = root / sha[:2]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / sha[2:]).write_bytes(data)


def median_ms(call: Callable[[], DiskUsage], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "media"
        fill(root, args.files)
        store = BlobStore(root)
        start = time.perf_counter()
        first = store.usage()
        first_ms = (time.perf_counter() - start) * 1000
        assert first == walk_usage(root), "the running total and the walk disagree"
        walk = median_ms(lambda: walk_usage(root), args.rounds)
        total = median_ms(store.usage, args.rounds)
    print(f"media store of {args.files:,} files: usage() by a walk {walk:.2f} ms (median of {args.rounds}); "
          f"the running total {total * 1000:.1f} us (its first count {first_ms:.1f} ms, once)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

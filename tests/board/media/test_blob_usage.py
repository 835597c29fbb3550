"""How full the media store is, asked on every media arrival (the total quota), costs no walk of the
store per file: a running total (one walk at first use, one at each prune) that stays exact through
adds, duplicates (content-addressed: one file), removals, prune and failed downloads (their
temporary files)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from board.app import Board
from board.envelope import Envelope
from board.media import Attachment, MediaKind, MediaProblem, MediaRef
from board.media.blobs import BlobStore, DiskUsage, walk_usage
from tests.board.media.test_media_core import BytesFetcher


def _fill(root: Path, count: int, size: int = 8) -> int:
    """``count`` small blobs written straight into the store (as a long-running board leaves them)."""
    total = 0
    for i in range(count):
        data = i.to_bytes(4, "big") * (size // 4)
        sha = hashlib.sha256(data).hexdigest()
        folder = root / sha[:2]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / sha[2:]).write_bytes(data)
        total += len(data)
    return total


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every os.scandir of a media store's top folder (one full walk each)."""
    seen: list[str] = []
    real = os.scandir

    def counting(path: str | os.PathLike[str] = ".") -> os.ScandirIterator[str]:  # type: ignore[type-arg]
        if Path(path).name == "media":
            seen.append(str(path))
        return real(path)  # type: ignore[return-value]

    monkeypatch.setattr(os, "scandir", counting)
    yield seen


async def test_arrivals_on_a_store_of_20000_files_walk_it_once_not_once_each(
    board: Board, data_dir: Path, walks: list[str]
) -> None:
    stored = _fill(data_dir / "media", 20_000)
    arrivals = 5
    for i in range(arrivals):
        body = f"note {i}\n".encode() * 10
        fetcher = BytesFetcher({f"m{i}": body})
        att = Attachment(kind=MediaKind.DOCUMENT, mime="text/plain", name=f"n{i}.txt", size=len(body),
                         source=MediaRef(channel="whatsapp", id=f"m{i}"))
        env = Envelope(channel="whatsapp", text="read", sender="911", chat_id="911", message_id=f"w{i}",
                       attachments=(att,))
        ready = await board.parts.media.prepare(env, fetcher)
        assert ready.attachments[0].problem is None, ready.attachments[0].problem
        stored += len(body)
    assert len(walks) == 1, f"{arrivals} arrivals walked the 20,000-file store {len(walks)} times"
    assert board.parts.media.blobs.usage() == DiskUsage(20_000 + arrivals, stored) == walk_usage(data_dir / "media")


def test_the_total_stays_exact_through_adds_duplicates_removals_and_failed_downloads(tmp_path: Path) -> None:
    root = tmp_path / "media"
    _fill(root, 50)
    store = BlobStore(root)
    assert store.usage() == walk_usage(root) == DiskUsage(50, 400)
    one = store.put(b"a" * 100)
    assert store.usage() == walk_usage(root) == DiskUsage(51, 500)
    store.put(b"a" * 100)  # the same bytes again: one file
    assert store.usage() == walk_usage(root) == DiskUsage(51, 500)
    with store.sink(1000, "x") as sink:  # on its way: its temporary file counts as it grows
        sink.write(b"b" * 30)
        assert store.usage() == DiskUsage(52, 530)  # what it was given (the walk sees it once flushed)
        assert walk_usage(root).files == 52
        sink.write(b"b" * 30)
        sink.finish()
    assert store.usage() == walk_usage(root) == DiskUsage(52, 560)
    with pytest.raises(MediaProblem), store.sink(50, "x") as sink:  # refused part way: its file goes
        sink.write(b"c" * 40)
        sink.write(b"c" * 40)
    assert store.usage() == walk_usage(root) == DiskUsage(52, 560)
    with pytest.raises(MediaProblem), store.sink(1000, "x") as sink:  # damaged: its file goes
        sink.expect(sha256="0" * 64)
        sink.write(b"d" * 10)
        sink.finish()
    assert store.usage() == walk_usage(root) == DiskUsage(52, 560)
    assert store.remove(one.sha256) and not store.remove(one.sha256)
    assert store.usage() == walk_usage(root) == DiskUsage(51, 460)


def test_prune_resyncs_the_total_with_what_is_left(tmp_path: Path) -> None:
    root = tmp_path / "media"
    store = BlobStore(root)
    old, new = store.put(b"old" * 10), store.put(b"new" * 20)
    assert store.usage() == DiskUsage(2, 90)
    stray = root / ".part-crashed"
    stray.write_bytes(b"z" * 7)  # a download cut by a crash (or another process's file): seen at the next walk
    past = time.time() - 31 * 86_400
    os.utime(old.path, (past, past))
    os.utime(stray, (past, past))
    assert store.usage() == DiskUsage(2, 90)
    assert store.prune(30) == 2
    assert store.usage() == walk_usage(root) == DiskUsage(1, 60) and store.get(new.sha256) is not None


def test_concurrent_downloads_and_walks_leave_the_total_exact(tmp_path: Path) -> None:
    root = tmp_path / "media"
    _fill(root, 2000)
    store = BlobStore(root)

    def downloads(worker: int) -> None:
        for i in range(200):
            blob = store.put(f"{i % 50}".encode() * (1 + worker))  # the same bytes from several threads too
            if i % 7 == 0:
                store.remove(blob.sha256)
            with contextlib.suppress(MediaProblem), store.sink(10, "x") as sink:
                sink.write(b"e" * 8)
                sink.write(b"e" * 8)

    def walks() -> None:
        for _ in range(5):
            store.usage()
            store.prune(30)  # nothing is old: a walk that only re-counts

    with ThreadPoolExecutor(6) as pool:
        done = [pool.submit(downloads, w % 2) for w in range(4)] + [pool.submit(walks) for _ in range(2)]
        for future in done:
            future.result()
    assert store.usage() == walk_usage(root)


def test_a_walk_between_a_download_file_being_made_and_counted_open_leaves_the_total_exact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race CI once caught (files 2084 != 2083): a download's temporary file made on disk, then a
    whole walk (the hourly prune, on another thread) before the download was counted as open. The walk
    took the empty file for a settled one, the download counted it again as open, and once it was
    dropped the total kept a file that was gone. The interleaving is forced: the moment the download
    opens its new file, a prune runs to its end on another thread."""
    root = tmp_path / "media"
    _fill(root, 20)
    store = BlobStore(root)
    store.usage()  # the first walk is done: the next one is the prune's
    real_fdopen = os.fdopen
    pruned: list[int] = []

    def fdopen_after_a_walk(fd: int, *args: object, **kwargs: object) -> object:
        if not pruned:
            with ThreadPoolExecutor(1) as other:
                pruned.append(other.submit(store.prune, 30).result())
        return real_fdopen(fd, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(os, "fdopen", fdopen_after_a_walk)
    with contextlib.suppress(MediaProblem), store.sink(10, "x") as sink:
        sink.write(b"e" * 20)  # over the limit: refused, its file dropped
    assert pruned == [0]
    assert store.usage() == walk_usage(root) == DiskUsage(20, 20 * 8)

"""Where fetched bytes live: a content-addressed file store under the data dir.

``<data_dir>/media/ab/cdef...`` (the sha256 of the content). Bytes are streamed into a
temporary file in the same folder (never held whole in memory), counted against a cap as
they come, hashed on the way, checked against what the service declared, then renamed into
place: a crash mid-download leaves only a temporary file, removed at the next prune. A
blob is removed ``keep_days`` after it was last used, or at once when what it held was refused
(:meth:`BlobStore.remove`); :meth:`BlobStore.usage` says how full the store is (the total quota,
``sabha status``).

How full, without a walk per file: the total quota asks :meth:`BlobStore.usage` before every
download, so the store keeps a running total (:class:`_Tally`) instead of walking every folder
each time. It is counted by one walk (:func:`walk_usage`) at first use and again by every
:meth:`BlobStore.prune` (hourly: a walk that removes and counts at once), and kept by every change
made through the store: a download's temporary file counts as it grows and goes on ``discard``; on
``finish`` it becomes the blob, or, the same bytes being stored already (content-addressed), it
replaces that file and counts once; ``remove`` takes the file off. Changes made while a walk runs
(the downloads of one process go on in threads and on the event loop) are noted and, once the walk
is done, their files are looked at again under the lock, so the total is the walk's exact figure.
Several processes may share a store (``sabha status`` or the terminal beside the daemon): each
keeps its own total, and files another process adds or removes (or a picture reader's scratch file
seen by a walk) are counted at this process's next walk: the daemon's figure, which its quotas
use, is re-synced by its hourly prune; a ``sabha status`` walks once when it asks.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from board.media.problems import MediaProblem, Problem

__all__ = ["Blob", "BlobSink", "BlobStore", "DiskUsage", "size_text", "walk_usage"]

log = logging.getLogger("sabha.media")

_TMP_PREFIX = ".part-"


@dataclass(frozen=True)
class Blob:
    """Stored bytes: their hash (the name), size and the file."""

    sha256: str
    size: int
    path: Path


@dataclass(frozen=True)
class DiskUsage:
    """What the store holds on disk: files (temporary ones included) and their bytes."""

    files: int
    bytes: int


class BlobSink:
    """One download on its way into the store (see :meth:`BlobStore.sink`): ``expect`` what
    the service declares, ``write`` chunks as they come, then ``finish``."""

    def __init__(self, store: BlobStore, limit: int, label: str) -> None:
        self.store = store
        self.limit = limit
        self.label = label
        self.expected_sha256: str | None = None
        self.expected_size: int | None = None
        self.mime: str | None = None
        self.size = 0
        self.written = 0  # the bytes in the temporary file (what the store's total counts of it)
        self.was_new = False  # finish(): True when the store did not hold these bytes before
        self._hash = hashlib.sha256()
        store.root.mkdir(parents=True, exist_ok=True)
        fd, name = store.tally.opened(self)
        self.part = Path(name)  # the temporary file, until finish() moves it into place
        self._file = os.fdopen(fd, "wb")

    def expect(self, *, size: int | None = None, sha256: str | None = None, mime: str | None = None) -> None:
        """What the service says the file is; a declared size over the cap is refused before any byte."""
        if size is not None:
            self.expected_size = size
            if size > self.limit:
                raise MediaProblem(Problem.TOO_LARGE, f"{self.label} is {size_text(size)}; the limit is "
                                                      f"{size_text(self.limit)}")
        if sha256:
            self.expected_sha256 = sha256.lower()
        if mime:
            self.mime = mime

    def write(self, chunk: bytes) -> None:
        """Add ``chunk``; past the cap the download is refused (the file so far is removed), and past the
        size the service declared it is damaged (what arrives is not the file announced: :meth:`overran`)."""
        self.size += len(chunk)
        if self.size > self.limit:
            raise MediaProblem(Problem.TOO_LARGE, f"{self.label} is over the limit of {size_text(self.limit)}")
        if self.overran:
            raise self.overrun()
        self._hash.update(chunk)
        self._file.write(chunk)
        self.written += len(chunk)

    @property
    def overran(self) -> bool:
        """True once more bytes arrived than the service declared."""
        return self.expected_size is not None and self.size > self.expected_size

    def overrun(self) -> MediaProblem:
        """What a download that ran past its declared size is told."""
        return MediaProblem(Problem.CHECKSUM, f"{self.label} arrived with more bytes than the "
                                              f"{self.expected_size or 0:,} the service announced; send it again")

    def finish(self) -> Blob:
        """Check size and checksum, move the file into place, and return the blob."""
        self._file.close()
        digest = self._hash.hexdigest()
        if self.expected_size is not None and self.size != self.expected_size:
            raise MediaProblem(Problem.CHECKSUM, f"{self.label} arrived with {self.size:,} bytes, "
                                                 f"not the {self.expected_size:,} the service announced")
        if self.expected_sha256 is not None and digest != self.expected_sha256:
            raise MediaProblem(Problem.CHECKSUM, f"{self.label} arrived damaged (its checksum does not match)")
        path = self.store.path_of(digest)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.was_new = self.store.tally.landed(self, path)
        return Blob(digest, self.size, path)

    def discard(self) -> None:
        """Drop what was written (a failed or refused download)."""
        with contextlib.suppress(OSError):
            self._file.close()
        self.store.tally.dropped(self)

    def __enter__(self) -> BlobSink:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if exc is not None or not self._file.closed:
            self.discard()


class BlobStore:
    """Content-addressed files under ``root`` (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.tally = _Tally(root)

    def path_of(self, sha256: str) -> Path:
        """Where the blob named ``sha256`` lives (whether or not it exists)."""
        if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
            raise ValueError(f"not a blob name: {sha256!r}")
        return self.root / sha256[:2] / sha256[2:]

    def get(self, sha256: str) -> Blob | None:
        """The stored blob, or None when it is gone (expired, never fetched)."""
        path = self.path_of(sha256)
        try:
            size = path.stat().st_size
        except OSError:
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # used: kept keep_days from now
        return Blob(sha256, size, path)

    def read(self, sha256: str) -> bytes:
        """The blob's bytes (for what a model receives whole: an image, a voice note); OSError when gone."""
        return self.path_of(sha256).read_bytes()

    def sink(self, limit: int, label: str) -> BlobSink:
        """A new download of at most ``limit`` bytes (``label`` names it in errors)."""
        return BlobSink(self, limit, label)

    def put(self, data: bytes, label: str = "the file") -> Blob:
        """Store ``data`` (made here: a spoken reply, a downscaled image)."""
        with self.sink(len(data), label) as sink:
            sink.write(data)
            return sink.finish()

    def remove(self, sha256: str) -> bool:
        """Remove the blob (what it held was refused); False when it was not there."""
        return self.tally.unlink(self.path_of(sha256))

    def usage(self) -> DiskUsage:
        """The files under the store and their bytes: the running total (the first call walks the store:
        blocking, run it in a thread; later ones cost nothing)."""
        return self.tally.usage()

    def prune(self, keep_days: float, *, now: float | None = None) -> int:
        """Remove blobs unused for ``keep_days`` and temporary files over an hour old; returns how many.
        The same walk counts what is left: the running total is re-synced."""
        now = time.time() if now is None else now
        cutoffs = (now - keep_days * 86_400, now - 3600)
        removed = self.tally.walk(cutoffs)
        if removed:
            log.info("media: removed %d stored file(s) unused for %g days", removed, keep_days)
        return removed


class _Tally:
    """The running total of a store (see the module docstring): settled files (all but open downloads'
    temporaries) counted by a walk and kept by each change; open downloads added as they stand."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()  # the figures, the open downloads and the changes noted during a walk
        self._walk_lock = threading.Lock()  # one walk at a time
        self._known = False
        self._files = self._bytes = 0
        self._open: dict[str, BlobSink] = {}
        self._walking = False
        self._touched: set[str] = set()

    def usage(self) -> DiskUsage:
        if not self._known:
            self.walk(None)
        with self._lock:
            live = list(self._open.values())
            return DiskUsage(self._files + len(live), self._bytes + sum(s.written for s in live))

    def opened(self, sink: BlobSink) -> tuple[int, str]:
        """Make ``sink``'s temporary file and count it open in one step: a walk that sees the file sees it
        open (were it made first, a whole walk between could count it as a settled file, then once more
        as open, and keep it after it went)."""
        with self._lock:
            fd, name = _mkstemp(self.root)
            self._open[name] = sink
            if self._walking:
                self._touched.add(name)
            return fd, name

    def landed(self, sink: BlobSink, path: Path) -> bool:
        """Move ``sink``'s file to ``path``; True when the store did not hold these bytes before."""
        with self._lock:
            new = not path.exists()
            os.replace(sink.part, path)
            self._closed(sink)
            self._change(path, 1 if new else 0, sink.written if new else 0)
            return new

    def dropped(self, sink: BlobSink) -> None:
        with self._lock:
            with contextlib.suppress(OSError):
                sink.part.unlink()
            self._closed(sink)

    def _closed(self, sink: BlobSink) -> None:
        self._open.pop(str(sink.part), None)
        if self._walking:  # a walk may have counted its temporary file
            self._touched.add(str(sink.part))

    def unlink(self, path: Path) -> bool:
        with self._lock:
            try:
                size = path.stat().st_size
                path.unlink()
            except OSError:
                return False
            self._change(path, -1, -size)
            return True

    def _change(self, path: Path, files: int, size: int) -> None:
        self._files += files
        self._bytes += size
        if self._walking:
            self._touched.add(str(path))

    def walk(self, cutoffs: tuple[float, float] | None) -> int:
        """Count the store anew (removing what is older than ``cutoffs``: blobs, temporaries); how many went."""
        with self._walk_lock:
            if cutoffs is None and self._known:  # a first count another caller just made
                return 0
            with self._lock:
                self._walking, self._touched = True, set()
            try:
                seen, removed = _walk(self.root, cutoffs, self._open)
            except BaseException:
                with self._lock:
                    self._walking = False
                raise
            with self._lock:  # in the lock that ends the walk: no change falls between
                for name in self._touched | set(self._open):  # changed under the walk: looked at again now
                    seen.pop(name, None)
                    size = None if name in self._open else _size(name)
                    if size is not None:
                        seen[name] = size
                self._files, self._bytes, self._known = len(seen), sum(seen.values()), True
                self._walking, self._touched = False, set()
            return removed


def walk_usage(root: Path) -> DiskUsage:
    """The files under ``root`` and their bytes by a walk of every folder (what :meth:`BlobStore.usage`
    keeps without one; for checks and the benchmark)."""
    seen, _ = _walk(root, None, {})
    return DiskUsage(len(seen), sum(seen.values()))


def _walk(root: Path, cutoffs: tuple[float, float] | None, skip: dict[str, BlobSink]) -> tuple[dict[str, int], int]:
    """Every file under ``root`` (its folders one deep) and its size; those older than ``cutoffs`` (blobs,
    temporary files at the top) are removed instead, and how many is returned."""
    seen: dict[str, int] = {}
    removed = 0
    try:
        top = list(os.scandir(root))
    except (FileNotFoundError, NotADirectoryError):
        return seen, 0
    for entry in top:
        folder = entry.is_dir(follow_symlinks=False)
        try:
            items = list(os.scandir(entry.path)) if folder else [entry]
        except OSError:
            continue
        for item in items:
            cutoff = _cutoff(cutoffs, folder, item.name)
            with contextlib.suppress(OSError):
                if not item.is_file(follow_symlinks=False):
                    continue
                stat = item.stat(follow_symlinks=False)
                if cutoff is not None and item.path not in skip and stat.st_mtime < cutoff:
                    os.unlink(item.path)
                    removed += 1
                    continue
                seen[item.path] = stat.st_size
    return seen, removed


def _cutoff(cutoffs: tuple[float, float] | None, in_folder: bool, name: str) -> float | None:
    if cutoffs is None:
        return None
    if in_folder:
        return cutoffs[0]
    return cutoffs[1] if name.startswith(_TMP_PREFIX) else None


def _size(name: str) -> int | None:
    try:
        stat = os.stat(name, follow_symlinks=False)
    except OSError:
        return None
    return stat.st_size if not os.path.isdir(name) else None


def _mkstemp(root: Path) -> tuple[int, str]:
    import tempfile

    return tempfile.mkstemp(prefix=_TMP_PREFIX, dir=root)


def size_text(size: int) -> str:
    """``size`` bytes as a person reads it (KB below a megabyte)."""
    return f"{size / (1024 * 1024):.1f} MB" if size >= 1024 * 1024 else f"{size / 1024:.0f} KB"

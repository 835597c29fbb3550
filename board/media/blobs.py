"""Where fetched bytes live: a content-addressed file store under the data dir.

``<data_dir>/media/ab/cdef...`` (the sha256 of the content). Bytes are streamed into a
temporary file in the same folder (never held whole in memory), counted against a cap as
they come, hashed on the way, checked against what the service declared, then renamed into
place: a crash mid-download leaves only a temporary file, removed at the next prune. A
blob is removed ``keep_days`` after it was last used, or at once when what it held was refused
(:meth:`BlobStore.remove`); :meth:`BlobStore.usage` says how full the store is (the total quota,
``sabha status``).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from board.media.problems import MediaProblem, Problem

__all__ = ["Blob", "BlobSink", "BlobStore", "DiskUsage", "size_text"]

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
        self.was_new = False  # finish(): True when the store did not hold these bytes before
        self._hash = hashlib.sha256()
        store.root.mkdir(parents=True, exist_ok=True)
        fd, name = _mkstemp(store.root)
        self._path = Path(name)
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
        self.was_new = not path.exists()
        os.replace(self._path, path)
        return Blob(digest, self.size, path)

    def discard(self) -> None:
        """Drop what was written (a failed or refused download)."""
        with contextlib.suppress(OSError):
            self._file.close()
        with contextlib.suppress(OSError):
            self._path.unlink()

    def __enter__(self) -> BlobSink:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if exc is not None or not self._file.closed:
            self.discard()


class BlobStore:
    """Content-addressed files under ``root`` (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root

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
        try:
            self.path_of(sha256).unlink()
        except OSError:
            return False
        return True

    def usage(self) -> DiskUsage:
        """The files under the store and their bytes (blocking: a walk of the folder; run it in a thread)."""
        files = size = 0
        if not self.root.is_dir():
            return DiskUsage(0, 0)
        for entry in os.scandir(self.root):
            entries = [entry] if not entry.is_dir(follow_symlinks=False) else list(os.scandir(entry.path))
            for item in entries:
                with contextlib.suppress(OSError):
                    if item.is_file(follow_symlinks=False):
                        size += item.stat(follow_symlinks=False).st_size
                        files += 1
        return DiskUsage(files, size)

    def prune(self, keep_days: float, *, now: float | None = None) -> int:
        """Remove blobs unused for ``keep_days`` and temporary files over an hour old; returns how many."""
        now = time.time() if now is None else now
        removed = 0
        if not self.root.is_dir():
            return 0
        for folder in self.root.iterdir():
            if not folder.is_dir():
                continue
            for path in folder.iterdir():
                removed += _remove_if_old(path, now - keep_days * 86_400)
        for path in self.root.glob(f"{_TMP_PREFIX}*"):
            removed += _remove_if_old(path, now - 3600)
        if removed:
            log.info("media: removed %d stored file(s) unused for %g days", removed, keep_days)
        return removed


def _remove_if_old(path: Path, cutoff: float) -> int:
    try:
        if path.stat().st_mtime < cutoff:
            path.unlink()
            return 1
    except OSError:
        pass
    return 0


def _mkstemp(root: Path) -> tuple[int, str]:
    import tempfile

    return tempfile.mkstemp(prefix=_TMP_PREFIX, dir=root)


def size_text(size: int) -> str:
    """``size`` bytes as a person reads it (KB below a megabyte)."""
    return f"{size / (1024 * 1024):.1f} MB" if size >= 1024 * 1024 else f"{size / 1024:.0f} KB"

"""Files that owners edit while Sabha runs, re-read only when they change, checked on every read.

:class:`WatchedFile` keeps the last good parsed value of one file. ``get()`` costs an
``lstat`` when nothing changed (and a ``stat`` of a symlink's target); when the file changed it is read with
:func:`read_checked` and parsed again. Every read is checked, not only the first: the real
path (symlinks resolved) must stay inside the file's root folder (the workspace), the
file must not be a hard link (a second name of a file that may live outside the workspace:
``st_nlink > 1``), it must be a regular file (not a FIFO, a device, a directory) and within
its size limit. Sabha's own shipped files (a package installer may hard-link them from its
cache) are read with ``allow_hard_links``.
A change that fails a check or fails to parse keeps the last good value live and records
the error, logging it once per distinct bad content, never once per turn.

Within one step of the event loop (the callbacks it runs before it next waits) a file is looked at
once: what one step sees of the workspace is one snapshot, and a meeting's members, whose prompts are
built in the same step, pay for the ``stat`` calls once instead of once per profile asked for. Inside
:func:`one_look` (a chat turn: :mod:`board.answer.dispatch`) the snapshot is the turn's: each file is looked
at once per turn however many loop steps the turn takes (its SQL, its model call), so an edit is seen by the
next turn, and a turn pays a few ``lstat`` calls instead of about seventy. A message's admission and the chat
turn that starts right after it (its session free, no attachment read in between) share one snapshot
(:func:`new_look`): the files are looked at once per message.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
import sys
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

__all__ = ["FileProblem", "FileState", "Fingerprint", "WatchedFile", "decode_text", "fingerprint", "new_look",
           "one_look", "read_checked", "step_token"]

log = logging.getLogger("sabha.files")

T = TypeVar("T")

#: (lstat: mtime_ns, inode; stat: mtime_ns, size, inode): a swap of the name (for a symlink
#: or another file) changes it even when the target looks the same.
Fingerprint = tuple[int, int, int, int, int]

#: The largest file :class:`WatchedFile` reads when its parser sets no tighter limit.
DEFAULT_MAX_BYTES = 1024 * 1024


class FileProblem(ValueError):
    """A file exists but cannot be used (too large, not UTF-8, empty, malformed)."""


@dataclass(frozen=True)
class FileState(Generic[T]):
    """What a :class:`WatchedFile` currently holds."""

    value: T | None
    error: str | None
    missing: bool


def fingerprint(path: Path) -> Fingerprint | None:
    """What changes when ``path`` or what it points to changes; None when it does not exist.

    One ``lstat`` for a file that is not a symlink (its ``stat`` would say the same); a symlink's target
    is ``stat``-ed too."""
    try:
        link = os.lstat(path)
        st = os.stat(path) if stat.S_ISLNK(link.st_mode) else link
    except (FileNotFoundError, NotADirectoryError):
        return None
    return (link.st_mtime_ns, link.st_ino, st.st_mtime_ns, st.st_size, st.st_ino)


_STEP: dict[int, object] = {}  # id(loop) -> the token of the loop step under way
#: The snapshot token of the turn under way (:func:`one_look`), None outside one.
_LOOK: ContextVar[object | None] = ContextVar("sabha_files_look", default=None)


@contextlib.contextmanager
def one_look(look: object | None = None) -> Iterator[None]:
    """Within the block, each watched file is looked at (``stat``) at most once: one snapshot of the
    workspace for the whole block, as :func:`step_token` gives one per loop step (see the module
    docstring). Tasks started inside it keep its snapshot. ``look``: a snapshot to go on with (one
    :func:`new_look` gave an earlier block of the same message), else a new one."""
    token = _LOOK.set(object() if look is None else look)
    try:
        yield
    finally:
        _LOOK.reset(token)


def new_look() -> object:
    """A snapshot token for :func:`one_look`, for blocks that are to share one look (a message's admission
    and the chat turn that follows it at once)."""
    return object()


def _forget_step(key: int) -> None:
    _STEP.pop(key, None)


def step_token() -> object | None:
    """A token that stays the same until the running event loop starts its next step; None outside a loop.

    asyncio is not imported for it: a command that runs no loop (``sabha souls``) never asks for it.
    Inside :func:`one_look` it is that block's token instead."""
    look = _LOOK.get()
    if look is not None:
        return look
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return None
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    key = id(loop)
    token = _STEP.get(key)
    if token is None:
        token = _STEP[key] = object()
        loop.call_soon(_forget_step, key)  # runs at the start of the next step: a new snapshot then
    return token


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def read_checked(path: Path, *, root: Path | None, max_bytes: int, what: str | None = None,
                 allow_hard_links: bool = False, follow_links: bool = True,
                 too_large: str = "make it shorter") -> bytes:
    """The bytes of ``path`` after the checks of the module docstring (the hard-link check only
    with a ``root`` and without ``allow_hard_links``). Without ``follow_links`` ``path`` itself
    must not be a symlink, wherever it points (a file named from outside, e.g. ``sabha kb add``).
    ``too_large`` is what the error for an oversized file tells the person to do.

    Raises :class:`FileProblem` naming the file and what to do when a check fails, and
    ``FileNotFoundError`` when it does not exist (a dangling symlink included).
    """
    name = what or str(path)
    if not follow_links and stat.S_ISLNK(os.lstat(path).st_mode):
        raise FileProblem(f"{name} is a symlink (to {os.readlink(path)}); links are not followed here (one "
                          "could lead anywhere): give the file's own path")
    real = path.resolve(strict=True)
    if root is not None:
        root_real = root.resolve()
        if not _inside(real, root_real):
            raise FileProblem(
                f"{name} resolves to {real}, outside the workspace {root_real}; "
                "replace the symlink with a file (or a link to a file) inside the workspace"
            )
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; O_NOFOLLOW: the last
        # component cannot have been swapped for a symlink since it was resolved.
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise FileProblem(f"{name} was replaced by a symlink while it was read; save it again") from exc
        if exc.errno == errno.EISDIR:
            raise FileProblem(f"{name} is a directory, not a regular file; put a file there") from exc
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) else (
                "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "a special file")
            raise FileProblem(f"{name} is {kind}, not a regular file; use a plain file instead")
        if root is not None and not allow_hard_links:
            _check_links(st, root.resolve(), name)
        if st.st_size > max_bytes:
            raise FileProblem(f"{name} is {st.st_size} bytes, over the {max_bytes}-byte limit; {too_large}")
        if root is not None:
            _check_opened(fd, root.resolve(), name)
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            chunk = os.read(fd, max_bytes + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > max_bytes:
        raise FileProblem(f"{name} is over the {max_bytes}-byte limit; {too_large}")
    return b"".join(chunks)


def _check_links(st: os.stat_result, root: Path, name: str) -> None:
    """A hard link is a second name for one file: its real path looks inside ``root`` while the
    file may be one outside it (``ln ~/secret.md workspace/SOUL.md``). Refused like a symlink out."""
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        raise FileProblem(
            f"{name} is a hard link (the same file has {st.st_nlink} names; another may be outside the "
            f"workspace {root}); hard links are refused like symlinks out of the workspace: replace it with a "
            "file of its own (copy it to a new name inside the workspace, then move that over it)"
        )


def _check_opened(fd: int, root: Path, name: str) -> None:
    """Where the open descriptor really points (Linux): a folder swapped between the check and
    the open cannot smuggle in a file from outside."""
    try:
        opened = Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return  # no /proc: the resolve check above stands
    if not _inside(opened, root):
        raise FileProblem(f"{name} resolves to {opened}, outside the workspace {root}; keep it inside the workspace")


class WatchedFile(Generic[T]):
    """One file parsed by ``parse(bytes) -> T``; see the module docstring."""

    def __init__(
        self,
        path: Path,
        parse: Callable[[bytes], T],
        *,
        label: str,
        root: Path | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        allow_hard_links: bool = False,
    ) -> None:
        self.path = path
        self.allow_hard_links = allow_hard_links
        self.label = label
        self.root = root
        self.max_bytes = max_bytes
        self._parse = parse
        self._seen: Fingerprint | None = None
        self._value: T | None = None
        self._error: str | None = None
        self._missing = True
        self._loaded_once = False
        self._looked_in: object | None = None  # the loop step that last looked at the file (step_token)

    def state(self) -> FileState[T]:
        """Refresh if the file changed and return value, error and whether it is missing."""
        self.refresh()
        return FileState(self._value, self._error, self._missing)

    @property
    def held(self) -> T | None:
        """The value held now, without looking at the file."""
        return self._value

    def get(self) -> T | None:
        """The last good value (None if the file never parsed or was deleted)."""
        self.refresh()
        return self._value

    def refresh(self) -> bool:
        """Re-read the file if its fingerprint changed. Returns True when the value changed.

        Looked at once per step of the event loop (:func:`step_token`)."""
        step = step_token()
        if step is not None and step is self._looked_in and self._loaded_once:
            return False
        self._looked_in = step
        current = fingerprint(self.path)
        if self._loaded_once and current == self._seen:
            return False
        self._loaded_once = True
        self._seen = current
        if current is None:
            changed = self._value is not None or not self._missing
            if self._value is not None:
                log.warning("%s: %s was deleted", self.label, self.path)
            self._value, self._error, self._missing = None, None, True
            return changed
        self._missing = False
        try:
            data = read_checked(self.path, root=self.root, max_bytes=self.max_bytes,
                                allow_hard_links=self.allow_hard_links)
            value = self._parse(data)
        except FileNotFoundError:
            # Deleted between stat and read: look again on the next call.
            self._seen = None
            self._loaded_once = False
            return False
        except (FileProblem, OSError) as exc:
            self._error = str(exc)
            reason = self._error.removeprefix(f"{self.path.name}: ")  # the path is named already
            if self._value is not None:
                log.error(
                    "%s: %s is broken (%s); keeping the last good version live. Fix the file and "
                    "save it again.",
                    self.label,
                    self.path,
                    reason,
                )
            else:
                log.error("%s: %s is broken (%s)", self.label, self.path, reason)
            return False
        changed = value != self._value
        self._value, self._error = value, None
        return changed


def decode_text(data: bytes, *, max_bytes: int, what: str, allow_empty: bool = False) -> str:
    """Bytes -> text with the checks every editable file gets: size, UTF-8, non-empty."""
    if len(data) > max_bytes:
        raise FileProblem(f"{what} is {len(data)} bytes, over the {max_bytes}-byte limit")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileProblem(f"{what} is not UTF-8 (byte {exc.start}); save it as UTF-8") from exc
    text = text.removeprefix("\ufeff")
    if not allow_empty and not text.strip():
        raise FileProblem(f"{what} is empty")
    return text

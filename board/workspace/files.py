"""Files that owners edit while Sabha runs, re-read only when they change.

:class:`WatchedFile` keeps the last good parsed value of one file. ``get()`` costs one
``stat`` when nothing changed; when the file changed it is read and parsed again. A
change that fails to parse keeps the last good value live and records the error,
logging it once per distinct bad content, never once per turn.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

log = logging.getLogger("sabha.files")

T = TypeVar("T")

Fingerprint = tuple[int, int, int]


class FileProblem(ValueError):
    """A file exists but cannot be used (too large, not UTF-8, empty, malformed)."""


@dataclass(frozen=True)
class FileState(Generic[T]):
    """What a :class:`WatchedFile` currently holds."""

    value: T | None
    error: str | None
    missing: bool


def fingerprint(path: Path) -> Fingerprint | None:
    """(mtime_ns, size, inode) of ``path``, or None when it does not exist."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


class WatchedFile(Generic[T]):
    """One file parsed by ``parse(bytes) -> T``; see the module docstring."""

    def __init__(self, path: Path, parse: Callable[[bytes], T], *, label: str) -> None:
        self.path = path
        self.label = label
        self._parse = parse
        self._seen: Fingerprint | None = None
        self._value: T | None = None
        self._error: str | None = None
        self._missing = True
        self._loaded_once = False

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
        """Re-read the file if its fingerprint changed. Returns True when the value changed."""
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
            data = self.path.read_bytes()
            value = self._parse(data)
        except FileNotFoundError:
            # Deleted between stat and read: look again on the next call.
            self._seen = None
            self._loaded_once = False
            return False
        except (FileProblem, OSError) as exc:
            self._error = str(exc)
            if self._value is not None:
                log.error(
                    "%s: %s is broken (%s); keeping the last good version live. Fix the file and "
                    "save it again.",
                    self.label,
                    self.path,
                    exc,
                )
            else:
                log.error("%s: %s is broken (%s)", self.label, self.path, exc)
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

"""A ZIP container (DOCX, XLSX) checked from its directory before any part is unpacked.

A zip bomb is a small file that unpacks to gigabytes. The central directory says how big
each part is once unpacked; a file whose parts add up to more than ``max_bytes``, whose
packing ratio is beyond what any office document reaches, or that holds absurdly many parts
is refused before a parser opens it. (Python's ``zipfile`` never returns more bytes than a
part declares, so a directory that lies cannot smuggle more past this check.)
"""

from __future__ import annotations

from pathlib import Path

from board.media.problems import MediaProblem, Problem

__all__ = ["MAX_ENTRIES", "MAX_RATIO", "MAX_UNPACKED_BYTES", "check_zip"]

MAX_UNPACKED_BYTES = 256 * 1024 * 1024
MAX_RATIO = 100.0  # office XML packs 5-30x; 100x over megabytes is a bomb, not a spreadsheet
MAX_ENTRIES = 10_000
_RATIO_FLOOR = 10 * 1024 * 1024  # below this unpacked size any ratio is harmless


def check_zip(path: Path, label: str, *, max_bytes: int = MAX_UNPACKED_BYTES, max_ratio: float = MAX_RATIO,
              max_entries: int = MAX_ENTRIES) -> int:
    """The unpacked size of the ZIP at ``path``; raises :class:`MediaProblem` (``UNREADABLE``) when
    it is not a ZIP, is encrypted, or looks like a bomb (see the module docstring)."""
    import zipfile  # here: only the extraction child reads ZIPs

    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise MediaProblem(Problem.UNREADABLE, f"{label} is damaged: it is not a readable ZIP container ({exc}); "
                           "open it and save it again, then resend it") from None
    if len(infos) > max_entries:
        raise MediaProblem(Problem.UNREADABLE, f"{label} holds {len(infos)} parts, more than a document has "
                           f"(limit {max_entries}); it was not opened")
    if any(info.flag_bits & 0x1 for info in infos):
        raise MediaProblem(Problem.UNREADABLE, f"{label} is password-protected; send a copy without a password")
    unpacked = sum(info.file_size for info in infos)
    packed = sum(info.compress_size for info in infos)
    if unpacked > max_bytes:
        raise MediaProblem(Problem.UNREADABLE, f"{label} would unpack to {_mb(unpacked)}, over the limit of "
                           f"{_mb(max_bytes)}; it looks like a zip bomb and was not opened")
    if unpacked > _RATIO_FLOOR and unpacked > max_ratio * max(packed, 1):
        raise MediaProblem(Problem.UNREADABLE, f"{label} would unpack {unpacked // max(packed, 1)} times larger "
                           f"than it is ({_mb(unpacked)}); it looks like a zip bomb and was not opened")
    return unpacked


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):.0f} MB"

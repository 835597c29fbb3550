"""Why an attachment could not be read, in words for the person who sent it."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["MediaProblem", "Problem"]


class Problem(StrEnum):
    """The kinds of trouble an attachment can meet on its way to the board."""

    TOO_LARGE = "too_large"  # over media.max_bytes or the service's own limit
    EXPIRED = "expired"  # the service no longer has it (404, an expired id)
    CHECKSUM = "checksum"  # the bytes are not what the service announced
    UNSUPPORTED = "unsupported"  # a type Sabha does not read
    UNREADABLE = "unreadable"  # corrupt, encrypted, a bomb, extraction timed out
    UNAVAILABLE = "unavailable"  # the service or the transcriber could not be reached; may work later


class MediaProblem(Exception):
    """An attachment could not be fetched or read; ``str()`` is a sentence for the sender."""

    def __init__(self, problem: Problem, text: str) -> None:
        super().__init__(text)
        self.problem = problem
        self.text = text

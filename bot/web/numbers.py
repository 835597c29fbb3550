"""Whole numbers from outside (a query string, a form field, a URL segment, an SSE ``Last-Event-ID``).

``str.isdigit`` and ``int`` take more than ASCII digits (``"²".isdigit()`` is True, ``int("٣")`` is 3)
and any length, so a page built on them answers odd input with a 500 or an OverflowError in the
database driver. :func:`whole_number` takes 1 to :data:`MAX_DIGITS` ASCII digits only.
"""

from __future__ import annotations

import re

__all__ = ["MAX_DIGITS", "MAX_NUMBER", "clamped", "whole_number"]

MAX_DIGITS = 9
_DIGITS = re.compile(r"[0-9]{1,9}")
MAX_NUMBER = 10**MAX_DIGITS - 1
_LONG = re.compile(r"[0-9]{1,100}")


def whole_number(text: str | None) -> int | None:
    """``text`` (surrounding blanks ignored) as a whole number of 1 to 9 ASCII digits; None otherwise."""
    if text is None:
        return None
    text = text.strip()
    return int(text) if _DIGITS.fullmatch(text) else None


def clamped(text: str | None, low: int, high: int, default: int) -> int:
    """``text`` (ASCII digits, however many) kept within ``low``..``high``; ``default`` when it is no
    whole number."""
    text = (text or "").strip()
    if not _LONG.fullmatch(text):
        return default
    return max(low, min(high, int(text)))

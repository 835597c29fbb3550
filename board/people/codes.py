"""One-time link codes: 8 characters from an alphabet with no look-alikes, stored only as a hash.

The alphabet leaves out 0/O, 1/I/L so a code read on one screen is typed right on another; 8 of
its 31 characters are about 8.5e11 codes, against a handful of guesses an hour per account
(:attr:`board.people.PeopleSettings.link_max_failures`) and minutes of life. What is typed is
normalised (case, spaces and dashes ignored) before hashing.
"""

from __future__ import annotations

import hashlib
import secrets

__all__ = ["ALPHABET", "CODE_LENGTH", "code_hash", "new_code", "normalise_code"]

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 8


def new_code() -> str:
    """A fresh random code."""
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def normalise_code(typed: str) -> str | None:
    """``typed`` as a code (upper case, spaces and dashes dropped), or None when it cannot be one."""
    code = "".join(typed.split()).replace("-", "").upper()
    if len(code) != CODE_LENGTH or any(ch not in ALPHABET for ch in code):
        return None
    return code


def code_hash(code: str) -> str:
    """What is stored of ``code``: its SHA-256, hex."""
    return hashlib.sha256(code.encode("ascii")).hexdigest()

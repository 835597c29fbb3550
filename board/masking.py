"""Secrets masked before anything is written anywhere: one function for every write.

:data:`REDACTOR` holds every secret Sabha knows (the composition root adds the config's
secrets and the secret environment variables at start; see ``bot.ops.logs.protect_config``).
:func:`mask` replaces each with ``***``; :func:`mask_value` does the same inside JSON-like
values. Every writer calls it: the state db (:meth:`board.db.StateDB.execute`), transcripts
(:meth:`board.conversation.transcripts.Transcript.append`), the log (``bot.ops.logs``) and the CLI's
output (``bot.cli.common.emit``). So a provider error whose body echoes the API key (a 401's
"Incorrect API key provided: ...") is stored and shown masked, wherever it goes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote

__all__ = ["MASK", "MIN_SECRET_CHARS", "REDACTOR", "Redactor", "mask", "mask_value"]

#: Shorter values are not masked (they would shred ordinary words); real secrets are longer.
MIN_SECRET_CHARS = 6
MASK = "***"


class Redactor:
    """The set of secret strings to mask, and the masking itself (thread-safe to extend)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._secrets: tuple[str, ...] = ()

    def add(self, values: Iterable[str | None]) -> None:
        """Mask these values from now on (short or empty ones are ignored)."""
        with self._lock:
            known = set(self._secrets)
            for value in values:
                if not value or len(value.strip()) < MIN_SECRET_CHARS:
                    continue
                value = value.strip()
                known.add(value)
                encoded = quote(value, safe="")
                if encoded != value:
                    known.add(encoded)  # as it appears in a URL or a form body
            # Longest first, so a secret containing another is masked whole.
            self._secrets = tuple(sorted(known, key=len, reverse=True))

    def clear(self) -> None:
        """Forget every secret (tests)."""
        with self._lock:
            self._secrets = ()

    def __call__(self, text: str) -> str:
        """``text`` with every known secret replaced by ``***``."""
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        return text

    def __len__(self) -> int:
        return len(self._secrets)


REDACTOR = Redactor()


def mask(text: str) -> str:
    """``text`` with every secret Sabha knows masked."""
    return REDACTOR(text)


def mask_value(value: Any) -> Any:
    """``value`` with every string in it masked (mappings, lists and tuples walked; tuples stay
    tuples, so SQL parameters stay parameters); anything else as it is."""
    if isinstance(value, str):
        return REDACTOR(value)
    if isinstance(value, Mapping):
        return {k: mask_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_value(v) for v in value]
    if isinstance(value, tuple):
        return tuple(mask_value(v) for v in value)
    return value

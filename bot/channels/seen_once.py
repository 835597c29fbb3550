"""Which messages a channel has already logged about: a redelivered webhook or update is a duplicate.

Meta delivers a webhook at least once and retries it for days. What a channel logs about a
message it does not store (a reaction, a system notice), or before the inbox dedupes it (the
errors Meta attached to it), would otherwise be logged again on every redelivery. A
:class:`SeenOnce` remembers the last ``capacity`` keys (a message id and what was logged) in
memory: one line per message and notice; after a restart a redelivery may be logged once more.
"""

from __future__ import annotations

from collections import OrderedDict

__all__ = ["CAPACITY", "SeenOnce"]

#: How many keys are remembered (the oldest is forgotten first): far more than Meta redelivers at once.
CAPACITY = 10_000


class SeenOnce:
    """Keys seen lately; :meth:`first` is True only the first time a key is offered."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._seen: OrderedDict[str, None] = OrderedDict()

    def first(self, *key: str) -> bool:
        """True when ``key`` was not seen among the last ``capacity`` keys (and remember it)."""
        joined = "\x1f".join(key)
        if joined in self._seen:
            self._seen.move_to_end(joined)
            return False
        self._seen[joined] = None
        if len(self._seen) > self.capacity:
            self._seen.popitem(last=False)
        return True

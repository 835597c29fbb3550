"""Counting prompt tokens per block, exactly where possible and labelled when estimated.

OpenAI models are counted with ``tiktoken`` when their encoding is already in
tiktoken's local cache; Sabha never downloads it (tiktoken's download has no timeout
and would stall a turn on a firewalled host). Every other case, Anthropic included
(it has no public offline tokenizer), uses a character estimate and says so:
:attr:`TokenCounter.exact` is False and :attr:`TokenCounter.method` reads
``estimate:chars/4``. A failed tiktoken load is remembered, so it costs one ``stat``
once per process. Billing never uses these numbers: costs come from the ``usage`` the
provider reports.

To get exact OpenAI counts offline, put the encoding file into ``$TIKTOKEN_CACHE_DIR``
(see ``notes/llm.md``).
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import tempfile
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from board.llm.base import ChatMessage

__all__ = ["ESTIMATE", "TokenCounter", "counter_for", "estimate_tokens"]

log = logging.getLogger("sabha.tokens")

ESTIMATE = "estimate:chars/4"
MESSAGE_OVERHEAD = 4  # role markers and separators per message, as OpenAI counts them

_BLOB = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
_ENCODINGS: dict[str, Callable[[str], int] | None] = {}
_LOCK = threading.Lock()


def estimate_tokens(text: str) -> int:
    """About four characters per token for Latin text; non-ASCII text costs more per character."""
    if not text:
        return 0
    if text.isascii():  # the common case, checked in C
        return max(1, math.ceil(len(text) / 4))
    non_ascii = len(text) - len(text.encode("ascii", "ignore"))
    return max(1, math.ceil((len(text) - non_ascii) / 4 + non_ascii / 1.5))


def _cache_file(encoding: str) -> str | None:
    """Where tiktoken would keep ``encoding``, mirroring ``tiktoken.load.read_file_cached``."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        folder = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        folder = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        folder = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if not folder:
        return None
    return os.path.join(folder, hashlib.sha1(_BLOB.format(name=encoding).encode()).hexdigest())


def _load(encoding: str) -> Callable[[str], int] | None:
    """An exact counter for ``encoding`` if tiktoken can load it from disk, else None (cached)."""
    with _LOCK:
        if encoding in _ENCODINGS:
            return _ENCODINGS[encoding]
        counter: Callable[[str], int] | None = None
        path = _cache_file(encoding)
        if path is None or not os.path.exists(path):
            log.info("tokens: tiktoken encoding %s is not cached locally; using a character estimate", encoding)
        else:
            try:
                import tiktoken

                enc = tiktoken.get_encoding(encoding)
                counter = lambda text: len(enc.encode(text, disallowed_special=()))  # noqa: E731
            except Exception as exc:  # noqa: BLE001 - any failure means: estimate
                log.warning("tokens: cannot load tiktoken encoding %s (%s); using a character estimate", encoding, exc)
        _ENCODINGS[encoding] = counter
        return counter


def _encoding_for(model: str) -> str | None:
    provider, _, name = model.partition(":")
    if provider.strip().lower() != "openai" or not name:
        return None
    try:
        from tiktoken.model import encoding_name_for_model
    except ImportError:
        return None
    try:
        return encoding_name_for_model(name.strip())
    except KeyError:
        return None  # an OpenAI-compatible server's model (llama, qwen...): not tiktoken's


@dataclass(frozen=True)
class TokenCounter:
    """Counts tokens for one model; ``method`` says how (``tiktoken:<encoding>`` or an estimate)."""

    method: str
    _count: Callable[[str], int]

    @property
    def exact(self) -> bool:
        """False when counts are character estimates."""
        return self.method != ESTIMATE

    def count(self, text: str) -> int:
        """Tokens in ``text``."""
        return self._count(text) if text else 0

    def count_messages(self, messages: Iterable[ChatMessage]) -> int:
        """Tokens of chat messages, with the per-message overhead."""
        total = 0
        for message in messages:
            total += MESSAGE_OVERHEAD + self.count(message.content)
            for call in message.tool_calls:
                total += self.count(call.name) + self.count(call.raw_arguments or str(call.arguments))
        return total


_ESTIMATOR = TokenCounter(ESTIMATE, estimate_tokens)


def counter_for(model: str) -> TokenCounter:
    """The best counter available offline for ``model`` (``provider:model``)."""
    encoding = _encoding_for(model)
    if encoding is None:
        return _ESTIMATOR
    exact = _load(encoding)
    return TokenCounter(f"tiktoken:{encoding}", exact) if exact is not None else _ESTIMATOR

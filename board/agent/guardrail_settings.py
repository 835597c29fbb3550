"""The guardrails' settings and default texts: what the config needs to describe ``guardrails:``
without importing the checks themselves (:mod:`board.agent.guardrails`, which re-exports these)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_EMPTY_REPLY", "DEFAULT_REFUSAL", "DEFAULT_UNSOURCED_NOTE", "SHINGLE", "GuardrailSettings"]

DEFAULT_REFUSAL = "I can't share my instructions or how I'm set up, but I'm glad to help with your question."
DEFAULT_EMPTY_REPLY = "I don't have anything useful to add to that yet; could you tell me a little more?"
DEFAULT_UNSOURCED_NOTE = (
    "(Note: the figures above are not backed by a cited source in this answer; treat them as unverified.)"
)
SHINGLE = 8  # words per shingle of the prompt-leak check


@dataclass(frozen=True)
class GuardrailSettings:
    """``guardrails:`` in the config, as plain values."""

    enabled: bool = True
    enforce: bool = True
    empty: bool = True
    empty_reply: str = DEFAULT_EMPTY_REPLY
    prompt_leak: bool = True
    prompt_leak_words: int = 20
    refusal: str = DEFAULT_REFUSAL
    model_name: bool = True
    hide_model_for: tuple[str, ...] | None = None  # None: every role
    model_name_replacement: str = "[withheld]"
    extra_model_terms: tuple[str, ...] = ()
    cite_sources_roles: tuple[str, ...] = ("research", "analyst")
    unsourced_note: str = DEFAULT_UNSOURCED_NOTE

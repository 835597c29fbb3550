"""The offline model: deterministic, no key, no network.

It answers in the speaking role's voice by quoting its soul file: the first sentence
of the soul's first paragraph (its stance) and one of its "questions you always ask",
chosen by a stable hash of the user's message. Every answer says that it came from
the offline model and how to configure a real one, so nobody mistakes it for advice.
"""

from __future__ import annotations

import hashlib
import re

from board.llm.base import LLMRequest, LLMResponse, Usage

OFFLINE_NOTICE = (
    "(offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "
    "\"anthropic:claude-sonnet-4-5\" with ANTHROPIC_API_KEY, or "
    "\"openai:gpt-4o-mini\" with OPENAI_API_KEY, for real answers.)"
)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _paragraphs(soul: str) -> list[str]:
    """Prose paragraphs of the soul: no headings, no bullets, whitespace folded."""
    paragraphs: list[str] = []
    for chunk in re.split(r"\n\s*\n", soul):
        lines = [ln.strip() for ln in chunk.strip().splitlines()]
        lines = [ln for ln in lines if ln and not ln.startswith(("#", "-", "*", ">", "|"))]
        if lines:
            paragraphs.append(" ".join(lines))
    return paragraphs


def voice_line(soul: str) -> str:
    """The soul's first sentence of prose: the role's stance in its own words."""
    for paragraph in _paragraphs(soul):
        sentence = _SENTENCE_END.split(paragraph, maxsplit=1)[0].strip()
        if sentence:
            return sentence
    return ""


def signature_questions(soul: str) -> list[str]:
    """Bullet lines of the soul that are questions."""
    questions = []
    for line in soul.splitlines():
        stripped = line.strip()
        if stripped.startswith(("- ", "* ")) and stripped.endswith("?"):
            questions.append(stripped[2:].strip())
    return questions


def _shorten(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


_PREPOSITIONS = "to|for|with|at|about|of|from|by|on|against|than|like|without|behind|around|before|after"


def _second_to_first_person(sentence: str) -> str:
    """Turn "You are X; you think..." into "I am X; I think..." so the stance reads as speech."""
    replacements = [
        (r"\bYou are\b", "I am"),
        (r"\byou are\b", "I am"),
        (r"\bYou're\b", "I'm"),
        (r"\byou're\b", "I'm"),
        (r"\bYou've\b", "I've"),
        (r"\byou've\b", "I've"),
        (r"\bYour\b", "My"),
        (r"\byour\b", "my"),
        (r"\byours\b", "mine"),
        (r"\byourself\b", "myself"),
        (rf"\b({_PREPOSITIONS}) you\b", r"\1 me"),
        (r"\bYou\b", "I"),
        (r"\byou\b", "I"),
    ]
    for pattern, repl in replacements:
        sentence = re.sub(pattern, repl, sentence)
    return sentence


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class OfflineProvider:
    """A deterministic stand-in model that speaks with the role's soul."""

    name = "offline"

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """Answer the last user message in the persona's voice."""
        user_text = ""
        for message in reversed(request.messages):
            if message.role == "user":
                user_text = message.content
                break
        persona = request.persona
        stance = _second_to_first_person(voice_line(persona.soul)) or f"I am {persona.name}."
        questions = signature_questions(persona.soul)
        digest = hashlib.sha256(user_text.encode("utf-8")).digest()
        parts = [stance]
        if user_text.strip():
            parts.append(f'On "{_shorten(user_text)}":')
        if questions:
            parts.append(questions[digest[0] % len(questions)])
        turns = sum(1 for m in request.messages if m.role == "user")
        if turns > 1:
            parts.append(f"(I have {turns - 1} earlier message(s) of ours in view.)")
        parts.append(OFFLINE_NOTICE)
        text = " ".join(parts)
        usage = Usage(
            input_tokens=_estimate_tokens(request.system_text)
            + sum(_estimate_tokens(m.content) for m in request.messages),
            output_tokens=_estimate_tokens(text),
        )
        return LLMResponse(text=text, model="offline", usage=usage, stop_reason="end_turn")

"""The offline model: deterministic, no key, no network.

It answers in the speaking role's voice by quoting its soul file: the first sentence
of the soul's first paragraph (its stance) and one of its "questions you always ask",
chosen by a stable hash of the user's message. Every answer says that it came from
the offline model and how to configure a real one, so nobody mistakes it for advice.

It can also exercise the tool loop without a key: when the last user message contains
``[TOOL: <name> ARG: {json}]`` for a tool the request offers, it calls that tool, then
answers quoting the tool's result. Asked for JSON of a schema
(``metadata["response_schema"]``, meetings do this) it returns a valid instance built
from the persona (see :mod:`board.llm.offline_json`). Asked to summarise for compaction
(``metadata["purpose"] == "compaction"``) it returns an extractive summary: the first
sentence of each message.
"""

from __future__ import annotations

import hashlib
import re

from board.llm import offline_json, text_tools
from board.llm.base import LLMRequest, LLMResponse, ToolCall, Usage

__all__ = [
    "OFFLINE_NOTICE",
    "OfflineProvider",
    "extractive_summary",
    "signature_questions",
    "voice_line",
]

OFFLINE_NOTICE = (
    "(offline model: no LLM was called. Set llm.model in sabha.yaml, e.g. "
    "\"anthropic:claude-sonnet-4-6\" with ANTHROPIC_API_KEY, or "
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


def _usage(request: LLMRequest, text: str) -> Usage:
    return Usage(
        input_tokens=_estimate_tokens(request.system_text) + sum(_estimate_tokens(m.content) for m in request.messages),
        output_tokens=_estimate_tokens(text),
    )


def extractive_summary(text: str, *, limit_chars: int = 1600) -> str:
    """The first sentence of every ``Who: text`` line, clipped to ``limit_chars`` (newest kept)."""
    lines = []
    for line in text.splitlines():
        who, sep, said = line.partition(": ")
        if not sep or not said.strip():
            continue
        first = _SENTENCE_END.split(said.strip(), maxsplit=1)[0]
        lines.append(f"- {who.strip()}: {_shorten(first, 160)}")
    while lines and sum(len(x) + 1 for x in lines) > limit_chars:
        lines.pop(0)
    return "\n".join(lines)


class OfflineProvider:
    """A deterministic stand-in model that speaks with the role's soul."""

    name = "offline"

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """Answer the last user message in the persona's voice (or call a tool it was told to)."""
        if request.metadata.get("purpose") == "compaction":
            last = request.messages[-1].content if request.messages else ""
            text = extractive_summary(last)
            return LLMResponse(text=text, model="offline", usage=_usage(request, text))
        if request.messages and request.messages[-1].role == "tool":
            return self._after_tools(request)
        if request.tools and request.tool_choice != "none" and request.messages:
            calls = self._requested_calls(request)
            if calls:
                return LLMResponse(text="", model="offline", tool_calls=calls, usage=_usage(request, ""),
                                   stop_reason="tool_use")
        return self._answer(request)

    @staticmethod
    def _requested_calls(request: LLMRequest) -> tuple[ToolCall, ...]:
        last = request.messages[-1]
        if last.role != "user" or "[TOOL:" not in last.content.upper():
            return ()
        offered = {t.name for t in request.tools}
        parsed = text_tools.parse(last.content, id_prefix=f"offline-{len(request.messages)}")
        return tuple(c for c in parsed.calls if c.name in offered)

    def _after_tools(self, request: LLMRequest) -> LLMResponse:
        results = []
        for message in reversed(request.messages):
            if message.role != "tool":
                break
            results.append(_shorten(message.content, 300))
        persona = request.persona
        stance = _second_to_first_person(voice_line(persona.soul)) or f"I am {persona.name}."
        text = " ".join([stance, "The tools returned: " + " | ".join(reversed(results)), OFFLINE_NOTICE])
        return LLMResponse(text=text, model="offline", usage=_usage(request, text))

    def _answer(self, request: LLMRequest) -> LLMResponse:
        user_text = ""
        for message in reversed(request.messages):
            if message.role == "user":
                user_text = message.content
                break
        persona = request.persona
        questions = signature_questions(persona.soul)
        schema = request.metadata.get("response_schema")
        if isinstance(schema, dict):
            first_line = user_text.strip().splitlines()[0] if user_text.strip() else ""
            topic = _shorten(first_line.rpartition(": ")[2] or first_line, 80)
            text = offline_json.instance_for(schema, speaker=persona.name, topic=topic, questions=questions)
            return LLMResponse(text=text, model="offline", usage=_usage(request, text), stop_reason="end_turn")
        stance = _second_to_first_person(voice_line(persona.soul)) or f"I am {persona.name}."
        digest = hashlib.sha256(user_text.encode("utf-8")).digest()
        parts = [stance]
        if user_text.strip():
            parts.append(f'On "{_shorten(user_text.strip().splitlines()[0])}":')
        if questions:
            parts.append(questions[digest[0] % len(questions)])
        turns = sum(1 for m in request.messages if m.role == "user")
        if turns > 1:
            parts.append(f"(I have {turns - 1} earlier message(s) of ours in view.)")
        parts.append(OFFLINE_NOTICE)
        text = " ".join(parts)
        return LLMResponse(text=text, model="offline", usage=_usage(request, text), stop_reason="end_turn")

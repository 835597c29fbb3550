"""Which models see pictures, and what a model that cannot see gets instead.

A model sees pictures when its name says so (:func:`sees_images`): every Anthropic Claude
model from Claude 3 on; OpenAI's GPT-4o, GPT-4.1, GPT-4.5, GPT-4 Turbo, GPT-5 and the o1,
o3 and o4 reasoning models (not o1-mini, o3-mini, nor the audio, realtime, transcription
and speech models); every Gemini model; the offline model, which describes what it is
given (count, type, size) without looking inside. Any other model, e.g. a local model
behind an OpenAI-compatible server, is taken not to see unless ``media.vision_models``
lists it (``fnmatch`` patterns over ``provider:model``, as ``llm.text_tool_protocol``).

The check is made for each model of a fallback chain just before it is called
(:func:`for_model`, used by :class:`board.llm.resilience.ResilientCaller`): a model that
cannot see gets each picture of the turn replaced by :data:`UNSEEN_IMAGE` after the text,
which already names and describes it; the pictures themselves never leave for it.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import replace

from board.llm.base import ChatMessage, LLMRequest
from board.llm.registry import split_model

__all__ = ["UNSEEN_IMAGE", "for_model", "image_count", "image_tokens", "sees_images", "without_images"]

#: What a model that cannot see gets in place of each picture.
UNSEEN_IMAGE = "[an image was attached that this model cannot see]"

#: Model names (after ``provider:``) that see, per provider; ``_BLIND`` wins over ``_SEE``.
_SEE: dict[str, tuple[str, ...]] = {
    "anthropic": ("claude-*",),
    "openai": ("gpt-4o*", "chatgpt-4o*", "gpt-4.1*", "gpt-4.5*", "gpt-4-turbo*", "gpt-4-vision*", "gpt-5*",
               "o1", "o1-20*", "o1-pro*", "o3", "o3-20*", "o3-pro*", "o4*"),
    "google": ("*",),
    "offline": ("*",),
}
_BLIND: dict[str, tuple[str, ...]] = {
    "anthropic": ("claude-2*", "claude-instant*"),
    "openai": ("*-audio*", "*-realtime*", "*-transcribe*", "*-tts*"),
}

#: The most input tokens one model-ready picture (at most 1568 px, see board.media.images) is
#: billed as: Anthropic about 1,600 (width x height / 750, scaled to 1.15 megapixels); GPT-4o
#: at most 1,445 (85 + 170 per 512 px tile); GPT-4.1 nano 3,778; Gemini 258 per 768 px tile.
_IMAGE_TOKENS = 4_000
#: GPT-4o mini bills each picture as many tokens as GPT-4o costs (2,833 + 5,667 per tile).
_IMAGE_TOKENS_4O_MINI = 48_200


def sees_images(model: str, extra: Sequence[str] = ()) -> bool:
    """True when ``model`` (``provider:model``) takes pictures (see the module docstring);
    ``extra``: ``media.vision_models``."""
    if any(fnmatch.fnmatchcase(model, pattern) for pattern in extra):
        return True
    provider, name = split_model(model)
    name = name.lower()
    if any(fnmatch.fnmatchcase(name, pattern) for pattern in _BLIND.get(provider, ())):
        return False
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in _SEE.get(provider, ()))


def image_count(request: LLMRequest) -> int:
    """How many pictures ``request`` carries."""
    return sum(len(m.images) for m in request.messages)


def image_tokens(model: str) -> int:
    """The most input tokens ``model`` bills one picture as (for worst-case cost estimates)."""
    return _IMAGE_TOKENS_4O_MINI if "gpt-4o-mini" in model else _IMAGE_TOKENS


def without_images(request: LLMRequest) -> LLMRequest:
    """``request`` with every picture replaced by :data:`UNSEEN_IMAGE` after its message's text."""
    if not image_count(request):
        return request
    return replace(request, messages=tuple(_blind(m) for m in request.messages))


def _blind(message: ChatMessage) -> ChatMessage:
    if not message.images:
        return message
    marks = "\n".join([UNSEEN_IMAGE] * len(message.images))
    content = f"{message.content}\n\n{marks}" if message.content.strip() else marks
    return replace(message, content=content, images=())


def for_model(request: LLMRequest, extra: Sequence[str] = ()) -> LLMRequest:
    """``request`` as its model (``request.model``) may receive it: pictures only for one that sees."""
    if not image_count(request) or sees_images(request.model, extra):
        return request
    return without_images(request)

"""Anthropic Messages API as an :class:`LLMProvider`, with prompt caching.

The system prompt goes out as separate text blocks; every cacheable block (the
byte-stable static block, the compaction summary) carries ``cache_control: {"type":
"ephemeral"}``, and so does the last content block of every message marked
:attr:`~board.llm.base.ChatMessage.cache_point` (the rolling breakpoints at the end of the
conversation and of each tool round), so each request reads from the cache the prefix an
earlier one wrote. The API allows 4 breakpoints per request (tools included): the system
ones are kept and the message ones fill the rest, latest first. The per-turn context
(:attr:`~board.llm.base.ChatMessage.context`) is one text block at the very end of the
request, after every breakpoint, so it never enters a cached prefix. Cache read and write
tokens are reported in :class:`Usage`. A user message's pictures
(:attr:`~board.llm.base.ChatMessage.images`) are ``image`` blocks (base64) before its text.
Tool calls are ``tool_use`` blocks; tool results go back as ``tool_result`` blocks in the
next user message. The SDK's own retries are off: :mod:`board.llm.resilience` decides.
"""

from __future__ import annotations

import base64
import time
from typing import Any

import anthropic
from anthropic.types import Message

from board.llm.base import THINKING_BUDGETS, ChatMessage, ImagePart, LLMRequest, LLMResponse, ToolCall, Usage
from board.llm.errors import bad_response_error
from board.llm.sdk_provider import SDKErrors, SDKProvider, answer_json, as_sent, preview
from board.llm.stream import emit

__all__ = [
    "CACHE_MARKER",
    "MAX_BREAKPOINTS",
    "AnthropicProvider",
    "to_anthropic_messages",
    "to_anthropic_system",
    "to_anthropic_tools",
]

_AS_SENT = ("messages", "system", "tools")  # sent as built: see board.llm.sdk_provider.as_sent

CACHE_MARKER = {"type": "ephemeral"}
#: The most ``cache_control`` blocks one request may carry (tools, system and messages together).
MAX_BREAKPOINTS = 4


def to_anthropic_system(request: LLMRequest) -> list[dict[str, Any]]:
    """System blocks, the cacheable ones marked with ``cache_control``."""
    blocks: list[dict[str, Any]] = []
    for block in request.system:
        if not block.text.strip():
            continue
        item: dict[str, Any] = {"type": "text", "text": block.text}
        if block.cacheable:
            item["cache_control"] = dict(CACHE_MARKER)
        blocks.append(item)
    return blocks


def _content(message: ChatMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if message.role == "tool":
        blocks.append({"type": "tool_result", "tool_use_id": message.tool_call_id or "", "content": message.content})
    else:
        blocks.extend(_image_block(image) for image in message.images)  # pictures before the words about them
        if message.content.strip():
            blocks.append({"type": "text", "text": message.content})
        for call in message.tool_calls:
            blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": dict(call.arguments)})
    if message.cache_point and blocks:
        blocks[-1]["cache_control"] = dict(CACHE_MARKER)
    return blocks


def _image_block(image: ImagePart) -> dict[str, Any]:
    """A picture as an ``image`` content block (base64; JPEG, PNG, GIF or WebP, at most 5 MB)."""
    data = base64.b64encode(image.data).decode("ascii")
    return {"type": "image", "source": {"type": "base64", "media_type": image.mime, "data": data}}


def _limit_breakpoints(messages: list[dict[str, Any]], allowed: int) -> None:
    """Keep only the last ``allowed`` message breakpoints (the earlier ones were read already)."""
    marked = [b for m in messages for b in m["content"] if "cache_control" in b]
    for block in marked[: max(0, len(marked) - max(0, allowed))]:
        del block["cache_control"]


def to_anthropic_messages(request: LLMRequest) -> list[dict[str, Any]]:
    """Messages API ``messages``: tool results become user turns, same-role turns merge, message
    breakpoints fit the budget left by the system prompt's, and the per-turn context comes last."""
    out = _merged(request)
    system_points = sum(1 for b in to_anthropic_system(request) if "cache_control" in b)
    _limit_breakpoints(out, MAX_BREAKPOINTS - system_points)
    context = request.context_text
    if context.strip():
        block = {"type": "text", "text": context}
        if out and out[-1]["role"] == "user":
            out[-1]["content"].append(block)  # after its text or tool results: allowed last in a user turn
        else:
            out.append({"role": "user", "content": [block]})
    return out


def _merged(request: LLMRequest) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in request.messages:
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _content(message)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            previous = out[-1]["content"]
            # tool_result blocks must come first in a user turn
            if role == "user" and any(b["type"] == "tool_result" for b in blocks):
                out[-1]["content"] = [*[b for b in previous if b["type"] == "tool_result"], *blocks,
                                      *[b for b in previous if b["type"] != "tool_result"]]
            else:
                previous.extend(blocks)
            continue
        out.append({"role": role, "content": blocks})
    if out and out[0]["role"] == "assistant":
        out.insert(0, {"role": "user", "content": [{"type": "text", "text": "(earlier conversation omitted)"}]})
    return out


def to_anthropic_tools(request: LLMRequest) -> list[dict[str, Any]]:
    """Tool specs as Messages API ``tools``."""
    return [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in request.tools]


def _usage(raw: Any) -> Usage:
    """Usage from a message's JSON (absent or null counts: 0)."""
    if not isinstance(raw, dict):
        return Usage()
    return Usage(
        input_tokens=_count(raw.get("input_tokens")),
        output_tokens=_count(raw.get("output_tokens")),
        cache_read_tokens=_count(raw.get("cache_read_input_tokens")),
        cache_write_tokens=_count(raw.get("cache_creation_input_tokens")),
    )


def _count(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _response(message: dict[str, Any], model: str, ttft_ms: float | None = None) -> LLMResponse:
    """A Messages API answer (its JSON, read once; a streamed one's final message dumped) as an LLMResponse."""
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[ToolCall] = []
    for block in message.get("content") or []:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        elif kind == "thinking":
            thoughts.append(str(block.get("thinking") or ""))
        elif kind == "tool_use":
            value = block.get("input")
            call_id, name = str(block.get("id") or ""), str(block.get("name") or "")
            if isinstance(value, dict):
                calls.append(ToolCall(id=call_id, name=name, arguments=value))
            else:
                calls.append(ToolCall(id=call_id, name=name, arguments={}, raw_arguments=str(value),
                                      parse_error=f"arguments must be a JSON object, got {type(value).__name__}"))
    return LLMResponse(
        text="".join(texts),
        model=model,
        tool_calls=tuple(calls),
        usage=_usage(message.get("usage")),
        stop_reason=str(message.get("stop_reason") or "end_turn"),
        ttft_ms=ttft_ms,
        thinking="\n\n".join(thoughts),
    )


class AnthropicProvider(SDKProvider[anthropic.AsyncAnthropic]):
    """Messages API with tools and prompt caching; see the module docstring."""

    name = "anthropic"
    title = "Anthropic"
    default_key_env = "ANTHROPIC_API_KEY"
    errors = SDKErrors.of(anthropic, base=anthropic.AnthropicError)

    def _make_client(self, api_key: str) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=self.settings.base_url or None,
            timeout=self.settings.timeout_s,
            max_retries=0,
            # the SDK's aiohttp transport (its `aiohttp` extra): httpx's default costs more CPU a call
            http_client=anthropic.DefaultAioHttpClient(timeout=self.settings.timeout_s),
        )

    def _params(self, request: LLMRequest, model: str) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": model,
            "max_tokens": request.max_tokens,
            "messages": to_anthropic_messages(request),
        }
        system = to_anthropic_system(request)
        if system:
            params["system"] = system
        if request.tools:
            params["tools"] = to_anthropic_tools(request)
            params["tool_choice"] = {"type": request.tool_choice}
        if request.temperature is not None:
            # anthropic 1.x dropped sampling keywords from create()/stream(); the API still takes them
            # (0-1) on models that support sampling, so they go in the body, and only when set: Claude
            # models after Opus 4.6 reject a temperature (leave it unset for them).
            params["extra_body"] = {"temperature": min(request.temperature, 1.0)}
        budget = THINKING_BUDGETS.get(request.thinking) if request.thinking else None
        if budget:  # the answer's own tokens come on top of the budget; thinking takes no temperature
            params["thinking"] = {"type": "enabled", "budget_tokens": budget}
            params["max_tokens"] = budget + request.max_tokens
            params.pop("extra_body", None)
        return params

    def _status_detail(self, exc: Any) -> tuple[str, str | None]:
        body = exc.body if isinstance(exc.body, dict) else {}
        inner = body.get("error")
        error: dict[str, Any] = inner if isinstance(inner, dict) else {}
        code = error.get("type")
        return str(error.get("message") or exc.message), str(code) if code else None

    async def _call(
        self, client: anthropic.AsyncAnthropic, params: dict[str, Any], request: LLMRequest, model: str
    ) -> LLMResponse:
        if not self.streamed(request):
            raw = await client.messages.with_raw_response.create(**as_sent(params, _AS_SENT))
            body = answer_json(self.name, model, await raw.read())
            if not isinstance(body.get("content"), list) or not body["content"]:
                raise bad_response_error(self.name, model, "the message has no content blocks")
            return _response(body, request.model)
        ttft: float | None = None
        started = time.perf_counter()
        async with client.messages.stream(**as_sent(params, _AS_SENT)) as stream:
            async for event in stream:
                if ttft is None and event.type in ("text", "input_json", "content_block_delta"):
                    ttft = round((time.perf_counter() - started) * 1000, 2)
                if event.type == "text":
                    emit(request.on_delta, event.text)
            message: object = await stream.get_final_message()
        if not isinstance(message, Message):
            raise bad_response_error(self.name, model, f"not a message: {preview(message)}")
        if not message.content:
            raise bad_response_error(self.name, model, "the message has no content blocks")
        return _response(message.model_dump(exclude_none=True), request.model, ttft)

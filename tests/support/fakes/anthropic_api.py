"""A scripted fake of the Anthropic Messages API for tests.

Owns: an aiohttp server on 127.0.0.1 (port 0) that speaks enough of
``POST /v1/messages`` for the official ``anthropic.AsyncAnthropic`` client:
JSON replies with ``text`` and ``tool_use`` content blocks, ``stream=True``
server-sent events (``message_start``, ``content_block_start`` / ``_delta`` /
``_stop``, ``message_delta``, ``message_stop``), Anthropic-shaped error bodies
(``{"type": "error", "error": {"type": ..., "message": ...}}``), slow replies
and dropped connections.

Usage::

    async with FakeAnthropic() as fake:
        fake.script_tool_call("lookup", {"q": "x"})
        fake.script_text("done")
        client = anthropic.AsyncAnthropic(base_url=fake.base_url, api_key="test", max_retries=0)

``base_url`` has no ``/v1``: the SDK itself posts to ``{base_url}/v1/messages``.

One scripted entry answers exactly one HTTP request (an SDK retry is a new
request and takes the next entry); an empty script answers ``default_text``.
Every request is recorded in ``requests`` (parsed JSON body and headers).

Prompt caching is simulated the way the API documents it: each block carrying
``cache_control`` (in ``tools``, ``system`` or message content; or the last block
when the top-level ``cache_control`` is set) is a breakpoint, and a request writes
the prefix up to each of its breakpoints to the cache (same model; prefixes shorter
than ``cache_min_tokens`` are not cached, as the API's per-model minimum). A later
request reads from the cache the longest prefix that ends at one of its breakpoints,
or at one of the 20 block boundaries before a breakpoint (the API's lookback), and
that an earlier request wrote less than its TTL ago (``ttl`` of the breakpoint:
5 minutes unless ``"1h"``; a read refreshes it). The read is reported as
``cache_read_input_tokens``; the rest of the prefix up to the last breakpoint as
``cache_creation_input_tokens``; ``input_tokens`` is what is left, so ``input +
cache_creation + cache_read`` is the whole prompt, as in the real API. As the API documents, a
change of ``tool_choice`` or of ``thinking`` invalidates the cached message blocks (the tools'
and the system's prefixes still read).
:meth:`FakeAnthropic.advance_clock` moves the fake's clock (to expire entries);
:meth:`FakeAnthropic.clear_cache` forgets everything. Token counts are deterministic
estimates (about four characters per token).

Like the real API the fake rejects, with a 400, an assistant ``tool_use`` not
answered by a ``tool_result`` in the next user message, a ``tool_result`` that
answers nothing, and empty message content (``validate=False`` turns this off).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from aiohttp import web

from tests.support.fakes.local_server import (
    Answer,
    ErrorReply,
    LLMServer,
    TextReply,
    ToolCallsReply,
    approx_tokens,
    pieces,
)
from tests.support.fakes.local_server import random_id as _rand

__all__ = [
    "FakeAnthropic",
    "ToolUse",
    "reply_error",
]


# --------------------------------------------------------------------------- replies

#: Tokens of a message's role framing (part of the cached prefix from its first block on).
MESSAGE_FRAMING = 3


@dataclass(frozen=True)
class ToolUse:
    name: str
    input: Mapping[str, Any]
    id: str

    @property
    def arguments(self) -> str:
        """The input as JSON."""
        return json.dumps(self.input)


_DEFAULT_MESSAGES: dict[str, str] = {
    "invalid_request_error": "There was an issue with the format or content of your request.",
    "authentication_error": "invalid x-api-key",
    "permission_error": "Your API key does not have permission to use the specified resource.",
    "not_found_error": "The requested resource could not be found.",
    "request_too_large": "Request exceeds the maximum allowed number of bytes.",
    "rate_limit_error": (
        "This request would exceed the rate limit for your organization of 50 requests per "
        "minute. Please reduce the prompt length or the maximum tokens requested, or try again later."
    ),
    "api_error": "Internal server error",
    "overloaded_error": "Overloaded",
}


def _error_body(kind: str, message: str | None) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {"type": kind, "message": message or _DEFAULT_MESSAGES.get(kind, f"fake {kind}")},
        "request_id": f"req_011C{_rand(20)}",
    }


def reply_error(
    status: int, kind: str, message: str | None = None, headers: Mapping[str, str] | None = None
) -> ErrorReply:
    """An Anthropic error. ``kind`` is the error type: ``rate_limit_error`` (429),
    ``overloaded_error`` (529), ``authentication_error`` (401), ``api_error`` (500),
    ``invalid_request_error`` (400), ``permission_error`` (403), ``not_found_error``
    (404), ``request_too_large`` (413)."""
    return ErrorReply(status, _error_body(kind, message), dict(headers or {}))


@dataclass(frozen=True)
class _Segment:
    text: str  # canonical serialisation (without cache_control)
    cache_control: Mapping[str, Any] | None
    framing: int = 0  # the message's framing tokens, counted with its first block
    message: bool = False  # a block of ``messages`` (not of ``tools`` or ``system``)

    @property
    def ttl(self) -> str:
        return str((self.cache_control or {}).get("ttl", "5m"))


# --------------------------------------------------------------------------- server


class FakeAnthropic(LLMServer):
    """Scripted Anthropic Messages API server. See the module docstring.

    ``cache_min_tokens`` defaults to 0, caching anything, which keeps test prompts small (the
    real API needs 1024-4096 tokens depending on the model).
    """

    name = "FakeAnthropic"
    path = "/v1/messages"  # base_url is the root: the SDK appends /v1/messages
    DEFAULT_TEXT = "OK (fake Anthropic reply)"
    stop_keyword = "stop_reason"  # "max_tokens" simulates a cut
    usual_stop = "end_turn"
    stream_error_kind = "overloaded_error"
    not_json_message = "There was an issue with the format of your request: body is not JSON"
    empty_field = "content"
    call_tokens = 20
    #: How many block boundaries before a breakpoint the API also checks for a cache hit.
    LOOKBACK_BLOCKS = 20
    TTL_S: ClassVar[dict[str, float]] = {"5m": 300.0, "1h": 3600.0}
    _cache: dict[str, float]  # prefix key -> when it expires (fake clock)
    _clock_offset: float = 0.0

    error_reply = staticmethod(reply_error)

    def tool_call(self, name: str, args: Mapping[str, Any], call_id: str | None = None) -> ToolUse:
        return ToolUse(name, dict(args), call_id or f"toolu_01{_rand(22)}")

    def response_headers(self) -> dict[str, str]:
        return {"request-id": f"req_011C{_rand(20)}"}

    def clear_cache(self) -> None:
        """Forget cached prefixes (as if the 5-minute TTL had passed)."""
        self._cache = {}

    def now(self) -> float:
        """The fake's clock (monotonic seconds, moved on by :meth:`advance_clock`)."""
        return time.monotonic() + self._clock_offset

    def advance_clock(self, seconds: float) -> None:
        """Let ``seconds`` pass for the cache's TTLs (a 301 s step expires every 5-minute entry)."""
        self._clock_offset += seconds

    def check_headers(self, request: web.Request) -> ErrorReply | None:
        """A key in ``x-api-key`` or ``Authorization: Bearer`` (anthropic 2.x sends a Bearer token)."""
        if self.api_key is not None and self.api_key not in (
            request.headers.get("x-api-key"),
            request.headers.get("Authorization", "").removeprefix("Bearer "),
        ):
            return reply_error(401, "authentication_error")
        if "anthropic-version" not in request.headers:
            return reply_error(400, "invalid_request_error", "anthropic-version: header is required")
        return None

    def unknown_path_error(self, request: web.Request) -> ErrorReply:
        return reply_error(404, "not_found_error", f"Not found: {request.path}")

    # -- request checks ----------------------------------------------------------

    def check_request(self, body: dict[str, Any]) -> ErrorReply | None:
        for key in ("model", "max_tokens", "messages"):
            if key not in body:
                return reply_error(400, "invalid_request_error", f"{key}: Field required")
        msgs = body["messages"]
        if not isinstance(msgs, list):
            return reply_error(400, "invalid_request_error", "messages: Input should be a valid list")
        if not self.validate:
            return None
        n_breakpoints = sum(1 for s in self._segments(body) if s.cache_control)
        if n_breakpoints > 4:
            return reply_error(
                400,
                "invalid_request_error",
                f"A maximum of 4 blocks with cache_control may be provided. Found {n_breakpoints}.",
            )
        for i, m in enumerate(msgs):
            if not isinstance(m, dict):
                return reply_error(400, "invalid_request_error", f"messages.{i}: Input should be a valid dictionary")
            content = m.get("content")
            if content in ("", [], None) and not (i == len(msgs) - 1 and m.get("role") == "assistant"):
                return reply_error(
                    400,
                    "invalid_request_error",
                    f"messages.{i}: all messages must have non-empty content except for the "
                    "optional final assistant message",
                )
            if isinstance(content, list):
                for b in content:
                    if isinstance(b, dict) and b.get("type") == "text" and not b.get("text"):
                        return reply_error(
                            400, "invalid_request_error", "messages: text content blocks must be non-empty"
                        )
        for i, m in enumerate(msgs):
            uses = _blocks(m, "tool_use") if m.get("role") == "assistant" else []
            ids = [b.get("id") for b in uses]
            nxt = msgs[i + 1] if i + 1 < len(msgs) else None
            answered = [b.get("tool_use_id") for b in _blocks(nxt, "tool_result")] if _is(nxt, "user") else []
            missing = [x for x in ids if x not in answered]
            if missing:
                return reply_error(
                    400,
                    "invalid_request_error",
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately "
                    f"after: {', '.join(missing)}. Each `tool_use` block must have a corresponding "
                    "`tool_result` block in the next message.",
                )
            if m.get("role") == "user":
                prev = msgs[i - 1] if i > 0 else None
                prev_ids = [b.get("id") for b in _blocks(prev, "tool_use")] if _is(prev, "assistant") else []
                for j, b in enumerate(m.get("content") if isinstance(m.get("content"), list) else []):
                    if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") not in prev_ids:
                        return reply_error(
                            400,
                            "invalid_request_error",
                            f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                            f"blocks: {b.get('tool_use_id')}. Each `tool_result` block must have a "
                            "corresponding `tool_use` block in the previous message.",
                        )
        return None

    # -- usage and caching ---------------------------------------------------------

    @staticmethod
    def _segments(body: dict[str, Any]) -> list[_Segment]:
        """The prompt in cache order: tools, system, then message content blocks."""
        segs: list[_Segment] = []

        def add(block: Any, framing: int = 0, message: bool = False) -> None:
            if isinstance(block, dict):
                cc = block.get("cache_control")
                rest = {k: v for k, v in block.items() if k != "cache_control"}
                segs.append(_Segment(json.dumps(rest, sort_keys=True, ensure_ascii=False), cc, framing, message))
            else:
                segs.append(_Segment(json.dumps(block, ensure_ascii=False), None, framing, message))

        for tool in body.get("tools") or []:
            add(tool)
        system = body.get("system")
        if isinstance(system, str):
            add({"type": "text", "text": system})
        elif isinstance(system, list):
            for b in system:
                add(b)
        for m in body.get("messages") or []:
            if not isinstance(m, dict):
                continue
            content = m.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else (content or [])
            for i, b in enumerate(blocks):
                add({"role": m.get("role"), **b} if isinstance(b, dict) else b, MESSAGE_FRAMING if i == 0 else 0,
                    True)
        top = body.get("cache_control")
        if top and segs:  # automatic caching: breakpoint on the last cacheable block
            segs[-1] = _Segment(segs[-1].text, top, segs[-1].framing, segs[-1].message)
        return segs

    def usage(self, body: dict[str, Any], output: int, override: Mapping[str, Any] | None) -> dict[str, Any]:
        segs = self._segments(body)
        prefix_tokens: list[int] = []
        keys: list[str] = []
        h = hashlib.sha256(str(body.get("model")).encode())
        total = 0
        # a change of tool_choice or of the thinking settings invalidates the cached message blocks (not the
        # tools' or the system's): the API documents it, so they key every prefix that reaches a message
        settings = json.dumps([body.get("tool_choice"), body.get("thinking")], sort_keys=True).encode()
        in_messages = False
        for s in segs:
            if s.message and not in_messages:
                in_messages = True
                h.update(settings)
            total += approx_tokens(s.text) + s.framing  # a message's framing is part of the prefix it starts
            h.update(s.text.encode())
            prefix_tokens.append(total)
            keys.append(h.copy().hexdigest())
        framed = sum(1 for s in segs if s.framing)
        # the reply priming (and the framing of a message without blocks) follows the prompt: never cached
        overhead = MESSAGE_FRAMING * (len(body.get("messages") or []) - framed) + 4
        prompt_total = total + overhead

        breakpoints = [i for i, s in enumerate(segs) if s.cache_control]
        read = create = 0
        ttl = "5m"
        if breakpoints:
            now = self.now()
            last = breakpoints[-1]
            ttl = segs[last].ttl
            # every position a breakpoint may read from: itself and the LOOKBACK_BLOCKS boundaries before it
            candidates = sorted({p for b in breakpoints for p in range(max(0, b - self.LOOKBACK_BLOCKS), b + 1)},
                                reverse=True)
            hit = next((p for p in candidates if self._cache.get(keys[p], 0.0) > now), None)
            if hit is not None:
                read = prefix_tokens[hit]
                at = next(b for b in breakpoints if b >= hit)  # the entry lives as long as its breakpoint says
                self._cache[keys[hit]] = now + self.TTL_S.get(segs[at].ttl, 300.0)  # a read refreshes it
            if hit != last and prefix_tokens[last] >= self.cache_min_tokens:
                create = prefix_tokens[last] - read
            for k in breakpoints:
                if prefix_tokens[k] >= self.cache_min_tokens:
                    expires = now + self.TTL_S.get(segs[k].ttl, 300.0)
                    self._cache[keys[k]] = max(self._cache.get(keys[k], 0.0), expires)

        usage: dict[str, Any] = {
            "input_tokens": prompt_total - read - create,
            "cache_creation_input_tokens": create,
            "cache_read_input_tokens": read,
            "cache_creation": {
                "ephemeral_5m_input_tokens": create if ttl != "1h" else 0,
                "ephemeral_1h_input_tokens": create if ttl == "1h" else 0,
            },
            "output_tokens": output,
            "service_tier": "standard",
        }
        if override:
            usage.update(override)
        return usage

    # -- responses ---------------------------------------------------------------

    @staticmethod
    def _content(reply: TextReply | ToolCallsReply[Any]) -> tuple[list[dict[str, Any]], str]:
        if isinstance(reply, TextReply):
            text = [{"type": "text", "text": reply.text}]
            if reply.thinking is not None:
                text.insert(0, {"type": "thinking", "thinking": reply.thinking, "signature": "fake-signature"})
            return text, reply.stop
        blocks: list[dict[str, Any]] = []
        if reply.text:
            blocks.append({"type": "text", "text": reply.text})
        for c in reply.calls:
            blocks.append({"type": "tool_use", "id": c.id, "name": c.name, "input": dict(c.input)})
        return blocks, "tool_use"

    def json_answer(self, answer: Answer) -> dict[str, Any]:
        content, stop = self._content(answer.reply)
        return _message(answer.model, content, stop, answer.usage)

    async def write_stream(self, resp: web.StreamResponse, answer: Answer) -> None:
        reply, usage, model = answer.reply, answer.usage, answer.model
        delay = getattr(reply, "chunk_delay", 0.0)

        async def event(name: str, data: dict[str, Any]) -> None:
            await resp.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            if delay:
                await asyncio.sleep(delay)

        start_usage = {**usage, "output_tokens": 1}
        await event("message_start", {"type": "message_start", "message": _message(model, [], None, start_usage)})
        content, stop = self._content(reply)
        if answer.error is not None:
            await event("content_block_start", _block_start(0, {"type": "text", "text": ""}))
            for piece in pieces(content[0]["text"]):
                await event("content_block_delta", _block_delta(0, {"type": "text_delta", "text": piece}))
            await event("error", dict(answer.error))
            return

        await event("ping", {"type": "ping"})
        for idx, block in enumerate(content):
            if block["type"] == "text":
                await event("content_block_start", _block_start(idx, {"type": "text", "text": ""}))
                for piece in pieces(block["text"]):
                    await event("content_block_delta", _block_delta(idx, {"type": "text_delta", "text": piece}))
            else:
                await event("content_block_start", _block_start(idx, {**block, "input": {}}))
                args = json.dumps(block["input"])
                for s in range(0, len(args), 8):
                    delta = {"type": "input_json_delta", "partial_json": args[s : s + 8]}
                    await event("content_block_delta", _block_delta(idx, delta))
            await event("content_block_stop", {"type": "content_block_stop", "index": idx})
        keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")
        await event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {k: usage[k] for k in keys},
            },
        )
        await resp.write(b'event: message_stop\ndata: {"type": "message_stop"}\n\n')


def _message(model: str, content: list[dict[str, Any]], stop: str | None, usage: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"msg_01{_rand(22)}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }


def _blocks(message: Any, kind: str) -> list[dict[str, Any]]:
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return []
    return [b for b in message["content"] if isinstance(b, dict) and b.get("type") == kind]


def _is(message: Any, role: str) -> bool:
    return isinstance(message, dict) and message.get("role") == role


def _block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _block_delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}

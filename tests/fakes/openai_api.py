"""A scripted fake of the OpenAI Chat Completions API for tests.

Owns: an aiohttp server on 127.0.0.1 (port 0) that speaks enough of
``POST /v1/chat/completions`` for the official ``openai.AsyncOpenAI`` client:
JSON replies, ``stream=True`` server-sent events (``data: {...}`` chunks, a
usage-only chunk when ``stream_options.include_usage`` is set, ``data: [DONE]``),
OpenAI-shaped error bodies, slow replies and dropped connections.

Usage::

    async with FakeOpenAI() as fake:
        fake.script_tool_call("lookup", {"q": "x"})
        fake.script_text("done")
        client = openai.AsyncOpenAI(base_url=fake.base_url, api_key="test", max_retries=0)
        ...
        assert fake.requests[0].body["tools"][0]["function"]["name"] == "lookup"

One scripted entry answers exactly one HTTP request (an SDK retry is a new
request and takes the next entry); when the script is empty the server answers
with ``default_text``. Every request is recorded in ``requests`` (parsed JSON
body and headers). Token counts are deterministic estimates (about four
characters per token), never tiktoken, so no encoding download is needed.

Like the real API the fake rejects, with a 400, a transcript in which an
assistant message's ``tool_calls`` are not all answered by following ``tool``
messages, or a ``tool`` message that answers nothing (``validate=False`` turns
this off).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.fakes.local_server import (
    DelayReply,
    DisconnectReply,
    ErrorReply,
    RawReply,
    RecordedRequest,
    ScriptedServer,
    approx_tokens,
    pieces,
)
from tests.fakes.local_server import random_id as _rand

__all__ = [
    "DelayReply",
    "DisconnectReply",
    "EmptyChoicesReply",
    "ErrorReply",
    "FakeOpenAI",
    "RawReply",
    "RecordedRequest",
    "StreamErrorReply",
    "TextReply",
    "ToolCall",
    "ToolCallsReply",
    "approx_tokens",
    "reply_error",
    "reply_text",
    "reply_tool_call",
    "reply_tool_calls",
]


# --------------------------------------------------------------------------- replies


@dataclass(frozen=True)
class TextReply:
    text: str
    finish_reason: str = "stop"  # "length" simulates a max-tokens cut
    usage: Mapping[str, Any] | None = None  # overrides the estimated usage fields
    chunk_delay: float = 0.0  # seconds between streamed chunks


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: str  # a JSON string, exactly as the API sends it (may be invalid on purpose)
    id: str


@dataclass(frozen=True)
class ToolCallsReply:
    calls: tuple[ToolCall, ...]
    text: str | None = None  # assistant content sent alongside the calls
    usage: Mapping[str, Any] | None = None
    chunk_delay: float = 0.0


@dataclass(frozen=True)
class StreamErrorReply:
    """For stream=True: send some text chunks, then an in-stream error event."""

    text_before: str
    body: Mapping[str, Any]  # {"error": {...}}


@dataclass(frozen=True)
class EmptyChoicesReply:
    """A 200 completion whose ``choices`` list is empty (a broken upstream)."""


Own = TextReply | ToolCallsReply | StreamErrorReply | EmptyChoicesReply
Reply = Own | ErrorReply | DelayReply | RawReply | DisconnectReply

# code -> error "type", as the real API reports them
_ERROR_TYPES: dict[str, str] = {
    "rate_limit_exceeded": "requests",
    "insufficient_quota": "insufficient_quota",
    "invalid_api_key": "invalid_request_error",
    "context_length_exceeded": "invalid_request_error",
    "model_not_found": "invalid_request_error",
    "invalid_request_error": "invalid_request_error",
    "server_error": "server_error",
}
_TYPE_ONLY_KINDS = {"server_error", "invalid_request_error"}  # sent with "code": null
_DEFAULT_MESSAGES: dict[str, str] = {
    "rate_limit_exceeded": (
        "Rate limit reached for gpt-4o in organization org-fake on requests per min (RPM): "
        "Limit 3, Used 3, Requested 1. Please try again in 20s."
    ),
    "insufficient_quota": (
        "You exceeded your current quota, please check your plan and billing details."
    ),
    "invalid_api_key": "Incorrect API key provided: test. You can find your API key at "
    "https://platform.openai.com/account/api-keys.",
    "context_length_exceeded": "This model's maximum context length is 128000 tokens. "
    "However, your messages resulted in 130000 tokens. Please reduce the length of the messages.",
    "model_not_found": "The model `nope` does not exist or you do not have access to it.",
    "server_error": "The server had an error while processing your request. Sorry about that!",
}


def reply_text(
    text: str,
    *,
    finish_reason: str = "stop",
    usage: Mapping[str, Any] | None = None,
    chunk_delay: float = 0.0,
) -> TextReply:
    return TextReply(text, finish_reason, usage, chunk_delay)


def _args_json(args: Mapping[str, Any] | str) -> str:
    return args if isinstance(args, str) else json.dumps(args)


def reply_tool_call(
    name: str,
    args: Mapping[str, Any] | str,
    call_id: str | None = None,
    *,
    text: str | None = None,
) -> ToolCallsReply:
    """``args`` is a dict (JSON-encoded for you) or a raw string (sent as is)."""
    return ToolCallsReply((ToolCall(name, _args_json(args), call_id or f"call_{_rand(24)}"),), text)


def reply_tool_calls(
    calls: Sequence[tuple[str, Mapping[str, Any] | str] | tuple[str, Mapping[str, Any] | str, str]],
    *,
    text: str | None = None,
) -> ToolCallsReply:
    """Parallel tool calls: ``[(name, args), (name, args, call_id), ...]``."""
    out = []
    for c in calls:
        name, args = c[0], c[1]
        cid = c[2] if len(c) > 2 else f"call_{_rand(24)}"  # type: ignore[misc]
        out.append(ToolCall(name, _args_json(args), cid))
    return ToolCallsReply(tuple(out), text)


def reply_error(
    status: int,
    kind: str,
    message: str | None = None,
    headers: Mapping[str, str] | None = None,
    *,
    param: str | None = None,
    error_type: str | None = None,
) -> ErrorReply:
    """An OpenAI error: ``{"error": {"message", "type", "param", "code"}}``.

    ``kind`` is the error ``code`` (``rate_limit_exceeded``, ``invalid_api_key``,
    ``insufficient_quota``, ``context_length_exceeded``...) or, for errors the
    API sends with ``code: null``, the type (``server_error``,
    ``invalid_request_error``).
    """
    etype = error_type or _ERROR_TYPES.get(
        kind, "server_error" if status >= 500 else "invalid_request_error"
    )
    code = None if kind in _TYPE_ONLY_KINDS else kind
    body = {
        "error": {
            "message": message or _DEFAULT_MESSAGES.get(kind, f"fake {kind} error"),
            "type": etype,
            "param": param,
            "code": code,
        }
    }
    return ErrorReply(status, body, dict(headers or {}))


# --------------------------------------------------------------------------- server


class FakeOpenAI(ScriptedServer[Own]):
    """Scripted OpenAI-compatible server. See the module docstring."""

    name = "FakeOpenAI"

    def __init__(
        self,
        *,
        default_text: str = "OK (fake OpenAI reply)",
        api_key: str | None = None,
        validate: bool = True,
        cache_min_tokens: int = 1024,
    ) -> None:
        """
        api_key: if set, a request whose ``Authorization: Bearer`` differs gets 401.
        validate: reject malformed tool-call transcripts with 400, like the API.
        cache_min_tokens: prompts shorter than this never report cached tokens
            (OpenAI's automatic prompt caching starts at 1024 tokens and counts in
            steps of 128).
        """
        super().__init__(default_text=default_text)
        self.api_key = api_key
        self.validate = validate
        self.cache_min_tokens = cache_min_tokens
        self._seen_prompts: deque[str] = deque(maxlen=64)

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self._handle_chat)
        app.router.add_route("*", "/{tail:.*}", self._handle_unknown)

    @property
    def url(self) -> str:
        """The server root."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """For ``openai.AsyncOpenAI(base_url=...)``; the SDK appends ``/chat/completions``."""
        return f"{self.url}/v1"

    # -- scripting ---------------------------------------------------------------

    def text_reply(self, text: str, **kw: Any) -> Own:
        return reply_text(text, **kw)

    def tool_calls_reply(self, calls: Sequence[Any], *, text: str | None = None) -> Own:
        return reply_tool_calls(calls, text=text)

    def error_reply(
        self, status: int, kind: str, message: str | None = None, headers: Mapping[str, str] | None = None, **kw: Any
    ) -> ErrorReply:
        return reply_error(status, kind, message, headers, **kw)

    def stream_error_reply(self, text_before: str, kind: str | None, message: str | None) -> Own:
        return StreamErrorReply(text_before, reply_error(500, kind or "server_error", message).body)

    def empty_reply(self) -> Own:
        return EmptyChoicesReply()

    def response_headers(self) -> dict[str, str]:
        return {"x-request-id": f"req_{secrets.token_hex(16)}", "openai-processing-ms": "7"}

    def reset(self) -> None:
        super().reset()
        self._seen_prompts.clear()

    # -- handlers ----------------------------------------------------------------

    async def _handle_unknown(self, request: web.Request) -> web.StreamResponse:
        await self.record(request)
        return self.error_response(
            reply_error(
                404,
                "unknown_url",
                f"Invalid URL ({request.method} {request.path})",
                error_type="invalid_request_error",
            )
        )

    async def _handle_chat(self, request: web.Request) -> web.StreamResponse:
        rec = await self.record(request)
        body = rec.body

        if self.api_key is not None:
            auth = request.headers.get("Authorization", "")
            if auth != f"Bearer {self.api_key}":
                return self.error_response(reply_error(401, "invalid_api_key"))
        if not isinstance(body, dict):
            return self.error_response(
                reply_error(
                    400,
                    "invalid_request_error",
                    "We could not parse the JSON body of your request. (HINT: This likely means "
                    "you aren't using your HTTP library correctly.)",
                )
            )
        problem = self._check_request(body)
        if problem is not None:
            return self.error_response(problem)

        reply = await self.next_reply()
        fault = self.wire_fault(request, reply)
        if fault is not None:
            return fault
        assert isinstance(reply, (TextReply, ToolCallsReply, StreamErrorReply, EmptyChoicesReply))
        model = str(body.get("model", "gpt-fake"))
        usage = self._usage(body, reply)
        if isinstance(reply, EmptyChoicesReply):
            completion = self._completion(model, reply_text(""), usage)
            completion["choices"] = []
            return web.json_response(completion, headers=self.response_headers())
        if body.get("stream"):
            return await self._stream(request, body, model, reply, usage)
        assert isinstance(reply, (TextReply, ToolCallsReply))
        return web.json_response(self._completion(model, reply, usage), headers=self.response_headers())

    # -- request checks ----------------------------------------------------------

    def _check_request(self, body: dict[str, Any]) -> ErrorReply | None:
        if "model" not in body:
            return reply_error(400, "invalid_request_error", "you must provide a model parameter")
        msgs = body.get("messages")
        if not isinstance(msgs, list) or not msgs:
            return reply_error(
                400,
                "invalid_request_error",
                "Missing required parameter: 'messages'."
                if msgs is None
                else "Invalid 'messages': empty array. Expected an array with minimum length 1.",
                param="messages",
            )
        if not self.validate:
            return None
        open_ids: list[str] = []
        opened_at = -1
        for i, m in enumerate(msgs):
            if not isinstance(m, dict):
                return reply_error(
                    400, "invalid_request_error", f"Invalid type for 'messages[{i}]': expected an object.",
                    param=f"messages[{i}]",
                )
            role = m.get("role")
            if role == "tool":
                tcid = m.get("tool_call_id")
                if tcid not in open_ids:
                    return reply_error(
                        400,
                        "invalid_request_error",
                        "Invalid parameter: messages with role 'tool' must be a response to a "
                        "preceeding message with 'tool_calls'.",
                        param=f"messages.[{i}].role",
                    )
                open_ids.remove(tcid)
                continue
            if open_ids:
                return self._unanswered(open_ids, opened_at)
            if role == "assistant" and m.get("tool_calls"):
                open_ids = [tc.get("id") for tc in m["tool_calls"]]
                opened_at = i
        if open_ids:
            return self._unanswered(open_ids, opened_at)
        return None

    @staticmethod
    def _unanswered(ids: list[str], index: int) -> ErrorReply:
        return reply_error(
            400,
            "invalid_request_error",
            "An assistant message with 'tool_calls' must be followed by tool messages responding "
            "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
            + ", ".join(ids),
            param=f"messages.[{index}].role",
        )

    # -- responses ---------------------------------------------------------------

    def _usage(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        msgs = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        prompt = 3  # reply priming
        for m in msgs:
            content = m.get("content")
            if not isinstance(content, str):
                content = json.dumps(content, ensure_ascii=False) if content else ""
            prompt += 4 + approx_tokens(content)
            if m.get("tool_calls"):
                prompt += approx_tokens(json.dumps(m["tool_calls"]))
        if body.get("tools"):
            prompt += approx_tokens(json.dumps(body["tools"]))

        if isinstance(reply, TextReply):
            completion = max(1, approx_tokens(reply.text))
        elif isinstance(reply, ToolCallsReply):
            completion = approx_tokens(reply.text or "") + sum(
                10 + approx_tokens(c.name + c.arguments) for c in reply.calls
            )
        else:  # stream error etc.
            completion = approx_tokens(getattr(reply, "text_before", "")) or 1

        # Automatic prefix caching: the longest common prefix with an earlier prompt,
        # counted in 128-token steps, only for prompts of cache_min_tokens or more.
        key = json.dumps([body.get("tools"), msgs], sort_keys=True, ensure_ascii=False)
        common = 0
        for seen in self._seen_prompts:
            n = 0
            for a, b in zip(seen, key, strict=False):
                if a != b:
                    break
                n += 1
            common = max(common, n)
        self._seen_prompts.append(key)
        cached = 0
        if prompt >= self.cache_min_tokens:
            cached = min(prompt, (common // 4) // 128 * 128)

        usage: dict[str, Any] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        }
        override = getattr(reply, "usage", None)
        if override:
            usage.update(override)
            if "total_tokens" not in override:
                usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        return usage

    def _completion(
        self, model: str, reply: TextReply | ToolCallsReply, usage: dict[str, Any]
    ) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "refusal": None, "annotations": []}
        if isinstance(reply, TextReply):
            message["content"] = reply.text
            finish = reply.finish_reason
        else:
            message["content"] = reply.text
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in reply.calls
            ]
            finish = "tool_calls"
        return {
            "id": f"chatcmpl-{_rand(29)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": usage,
            "service_tier": "default",
            "system_fingerprint": "fp_fake0001",
        }

    async def _stream(
        self,
        request: web.Request,
        body: dict[str, Any],
        model: str,
        reply: Reply,
        usage: dict[str, Any],
    ) -> web.StreamResponse:
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        resp = web.StreamResponse(
            status=200,
            headers={
                "Content-Type": "text/event-stream; charset=utf-8",
                "Cache-Control": "no-cache",
                **self.response_headers(),
            },
        )
        await resp.prepare(request)
        cid = f"chatcmpl-{_rand(29)}"
        created = int(time.time())
        delay = getattr(reply, "chunk_delay", 0.0)

        async def send(choices: list[dict[str, Any]], usage_value: Any = None, last: bool = False) -> None:
            chunk: dict[str, Any] = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "service_tier": "default",
                "system_fingerprint": "fp_fake0001",
                "choices": choices,
            }
            if include_usage:
                chunk["usage"] = usage_value
            await resp.write(f"data: {json.dumps(chunk)}\n\n".encode())
            if delay and not last:
                await asyncio.sleep(delay)

        def choice(delta: dict[str, Any], finish: str | None = None) -> list[dict[str, Any]]:
            return [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]

        if isinstance(reply, StreamErrorReply):
            await send(choice({"role": "assistant", "content": "", "refusal": None}))
            for piece in pieces(reply.text_before):
                await send(choice({"content": piece}))
            await resp.write(f"data: {json.dumps(reply.body)}\n\n".encode())
            await resp.write_eof()
            return resp

        assert isinstance(reply, (TextReply, ToolCallsReply))
        text = reply.text or ""
        if isinstance(reply, TextReply):
            await send(choice({"role": "assistant", "content": "", "refusal": None}))
            for piece in pieces(text):
                await send(choice({"content": piece}))
            finish = reply.finish_reason
        else:
            if text:
                await send(choice({"role": "assistant", "content": "", "refusal": None}))
                for piece in pieces(text):
                    await send(choice({"content": piece}))
            for idx, call in enumerate(reply.calls):
                first: dict[str, Any] = {
                    "tool_calls": [
                        {
                            "index": idx,
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": ""},
                        }
                    ]
                }
                if idx == 0 and not text:
                    first = {"role": "assistant", "content": None, **first}
                await send(choice(first))
                args = call.arguments
                for start in range(0, len(args), 8):
                    await send(
                        choice({"tool_calls": [{"index": idx, "function": {"arguments": args[start : start + 8]}}]})
                    )
            finish = "tool_calls"
        await send(choice({}, finish), last=not include_usage)
        if include_usage:
            await send([], usage, last=True)
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp


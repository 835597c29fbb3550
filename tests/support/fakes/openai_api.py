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

Audio: ``POST /v1/audio/transcriptions`` (multipart, as the SDK sends it: ``file`` with its
name and content type, ``model``, optional ``language``) answers the text scripted for those
exact audio bytes (:meth:`FakeOpenAI.script_transcript`), with ``usage`` as the real API
reports it (``{"type": "duration", "seconds": ...}`` for whisper-1, tokens for the gpt-4o
models); ``transcribe_delay`` slows every answer, :meth:`FakeOpenAI.fail_transcriptions`
makes the next N fail (or a model always fail: ``failing_models``). ``POST /v1/audio/speech``
(JSON ``model``, ``voice``, ``input``, ``response_format``) answers bytes that look like
OGG/Opus; :meth:`FakeOpenAI.fail_speech` makes the next N fail. What each received is in
``transcriptions`` / ``speeches`` (not in ``requests``, which stays the chat's).

Like the real API the fake rejects, with a 400, a transcript in which an
assistant message's ``tool_calls`` are not all answered by following ``tool``
messages, or a ``tool`` message that answers nothing (``validate=False`` turns
this off).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from aiohttp.web_request import FileField

from tests.support.fakes.local_server import (
    Answer,
    DisconnectReply,
    ErrorReply,
    LLMServer,
    TextReply,
    approx_tokens,
    pieces,
)
from tests.support.fakes.local_server import random_id as _rand

__all__ = [
    "FakeOpenAI",
    "SpeechRequest",
    "ToolCall",
    "TranscriptionRequest",
    "fake_ogg_opus",
    "reply_error",
]


# --------------------------------------------------------------------------- replies


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: str  # a JSON string, exactly as the API sends it (may be invalid on purpose)
    id: str


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


# --------------------------------------------------------------------------- audio


@dataclass(frozen=True)
class TranscriptionRequest:
    """What one ``POST /v1/audio/transcriptions`` carried."""

    model: str | None
    filename: str | None
    content_type: str | None
    audio: bytes
    fields: dict[str, str]
    authorization: str | None


@dataclass(frozen=True)
class SpeechRequest:
    """What one ``POST /v1/audio/speech`` carried."""

    body: dict[str, Any]

    @property
    def input(self) -> str:
        return str(self.body.get("input"))

    @property
    def voice(self) -> Any:
        return self.body.get("voice")

    @property
    def response_format(self) -> Any:
        return self.body.get("response_format")

    @property
    def model(self) -> Any:
        return self.body.get("model")


def fake_ogg_opus(seconds: float = 3.0, payload: bytes = b"") -> bytes:
    """Bytes shaped like an OGG/Opus file of ``seconds``: an ``OpusHead`` page, then a last page whose
    granule position (48 kHz samples) says the length. Not playable audio; enough for a parser."""
    def page(granule: int, body: bytes, flags: int) -> bytes:
        return (b"OggS" + bytes([0, flags]) + granule.to_bytes(8, "little") + b"\x01\x00\x00\x00"
                + b"\x00\x00\x00\x00" + b"\x00\x00\x00\x00" + bytes([1, len(body)]) + body)
    head = b"OpusHead" + bytes([1, 1]) + (312).to_bytes(2, "little") + (48000).to_bytes(4, "little") + b"\x00\x00\x00"
    tail = payload[:200] or b"fake opus audio"
    return page(0, head, 2) + page(int(seconds * 48000) + 312, tail, 4)


# --------------------------------------------------------------------------- server


class FakeOpenAI(LLMServer):
    """Scripted OpenAI-compatible server. See the module docstring.

    ``cache_min_tokens`` defaults to 1024: OpenAI's automatic prompt caching starts there and
    counts in steps of 128.
    """

    name = "FakeOpenAI"
    path = "/v1/chat/completions"
    sdk_prefix = "/v1"  # the SDK appends /chat/completions
    DEFAULT_TEXT = "OK (fake model reply)"
    stop_keyword = "finish_reason"  # "length" simulates a max-tokens cut
    usual_stop = "stop"
    CACHE_MIN_TOKENS = 1024
    stream_error_kind = "server_error"
    not_json_message = (
        "We could not parse the JSON body of your request. (HINT: This likely means "
        "you aren't using your HTTP library correctly.)"
    )
    empty_field = "choices"
    call_tokens = 10
    _seen_prompts: deque[str]

    error_reply = staticmethod(reply_error)

    # -- audio -----------------------------------------------------------------------

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.transcriptions: list[TranscriptionRequest] = []
        self.speeches: list[SpeechRequest] = []
        self.transcripts: dict[bytes, tuple[str, float]] = {}
        self.transcribe_delay = 0.0  # seconds before each transcription answer
        self.speech_delay = 0.0
        self.failing_models: set[str] = set()  # transcription models that always answer 503
        self._transcribe_failures: deque[ErrorReply | DisconnectReply] = deque()
        self._speech_failures: deque[ErrorReply | DisconnectReply] = deque()
        self._audio_event = asyncio.Event()

    def script_transcript(self, audio: bytes, text: str, *, seconds: float = 7.0) -> None:
        """Answer ``text`` (a note of ``seconds``) whenever exactly ``audio`` is posted for transcription."""
        self.transcripts[audio] = (text, seconds)

    def fail_transcriptions(self, times: int = 1, status: int = 500, kind: str = "server_error", *,
                            disconnect: bool = False) -> None:
        """The next ``times`` transcription requests fail (an error body, or a dropped connection)."""
        for _ in range(times):
            self._transcribe_failures.append(DisconnectReply() if disconnect else reply_error(status, kind))

    def fail_speech(self, times: int = 1, status: int = 500, kind: str = "server_error") -> None:
        """The next ``times`` speech requests fail."""
        for _ in range(times):
            self._speech_failures.append(reply_error(status, kind))

    async def wait_for_audio(self, transcriptions: int = 0, speeches: int = 0, timeout: float = 10.0) -> None:
        """Wait until at least so many transcription and speech requests arrived."""

        async def _wait() -> None:
            while len(self.transcriptions) < transcriptions or len(self.speeches) < speeches:
                self._audio_event.clear()
                await self._audio_event.wait()

        await asyncio.wait_for(_wait(), timeout)

    async def _audio_delay(self, seconds: float) -> None:
        if seconds:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), timeout=seconds)

    async def _transcribe(self, request: web.Request) -> web.StreamResponse:
        form = await request.post()
        upload = form.get("file")
        audio = upload.file.read() if isinstance(upload, FileField) else b""
        fields = {k: str(v) for k, v in form.items() if not isinstance(v, FileField)}
        self.transcriptions.append(TranscriptionRequest(
            fields.get("model"), upload.filename if isinstance(upload, FileField) else None,
            upload.content_type if isinstance(upload, FileField) else None, audio, fields,
            request.headers.get("Authorization")))
        self._audio_event.set()
        problem = self.check_headers(request)
        if problem is None and (not audio or "model" not in fields):
            problem = reply_error(400, "invalid_request_error", "you must provide a file and a model", param="file")
        if problem is not None:
            return self.error_response(problem)
        await self._audio_delay(self.transcribe_delay)
        if self._transcribe_failures:
            fault = self.wire_fault(request, self._transcribe_failures.popleft())
            assert fault is not None
            return fault
        model = fields["model"]
        if model in self.failing_models:
            return self.error_response(reply_error(503, "server_error"))
        text, seconds = self.transcripts.get(audio, (f"(fake transcript of {len(audio)} bytes)", 7.0))
        usage: dict[str, Any] = {"type": "duration", "seconds": seconds} if model.startswith("whisper") else {
            "type": "tokens", "input_tokens": int(seconds * 10), "output_tokens": approx_tokens(text),
            "total_tokens": int(seconds * 10) + approx_tokens(text),
            "input_token_details": {"text_tokens": 0, "audio_tokens": int(seconds * 10)}}
        return web.json_response({"text": text, "usage": usage}, headers=self.response_headers())

    async def _speech(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        self.speeches.append(SpeechRequest(body if isinstance(body, dict) else {}))
        self._audio_event.set()
        problem = self.check_headers(request)
        if problem is None and not (isinstance(body, dict) and body.get("input") and body.get("voice")):
            problem = reply_error(400, "invalid_request_error", "input and voice are required", param="input")
        if problem is not None:
            return self.error_response(problem)
        await self._audio_delay(self.speech_delay)
        if self._speech_failures:
            fault = self.wire_fault(request, self._speech_failures.popleft())
            assert fault is not None
            return fault
        seconds = max(1.0, len(str(body["input"])) / 15)
        audio = fake_ogg_opus(seconds, str(body["input"]).encode())
        types = {"opus": "audio/ogg", "mp3": "audio/mpeg", "wav": "audio/wav"}
        return web.Response(body=audio, content_type=types.get(str(body.get("response_format")), "audio/ogg"),
                            headers=self.response_headers())

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/audio/transcriptions", self._transcribe)
        app.router.add_post("/v1/audio/speech", self._speech)
        super().routes(app)

    def tool_call(self, name: str, args: Mapping[str, Any] | str, call_id: str | None = None) -> ToolCall:
        """``args`` is a dict (JSON-encoded for you) or a raw string (sent as is)."""
        arguments = args if isinstance(args, str) else json.dumps(args)
        return ToolCall(name, arguments, call_id or f"call_{_rand(24)}")

    def response_headers(self) -> dict[str, str]:
        return {"x-request-id": f"req_{secrets.token_hex(16)}", "openai-processing-ms": "7"}

    def clear_cache(self) -> None:
        self._seen_prompts = deque(maxlen=64)

    def check_headers(self, request: web.Request) -> ErrorReply | None:
        """The key in ``Authorization: Bearer``."""
        if self.api_key is not None and request.headers.get("Authorization", "") != f"Bearer {self.api_key}":
            return reply_error(401, "invalid_api_key")
        return None

    def unknown_path_error(self, request: web.Request) -> ErrorReply:
        message = f"Invalid URL ({request.method} {request.path})"
        return reply_error(404, "unknown_url", message, error_type="invalid_request_error")

    # -- request checks ----------------------------------------------------------

    def check_request(self, body: dict[str, Any]) -> ErrorReply | None:
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

    def usage(self, body: dict[str, Any], output: int, override: Mapping[str, Any] | None) -> dict[str, Any]:
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
            "completion_tokens": output,
            "total_tokens": prompt + output,
            "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        }
        if override:
            usage.update(override)
            if "total_tokens" not in override:
                usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        return usage

    def json_answer(self, answer: Answer) -> dict[str, Any]:
        reply = answer.reply
        message: dict[str, Any] = {"role": "assistant", "refusal": None, "annotations": []}
        if isinstance(reply, TextReply):
            message["content"] = reply.text
            finish = reply.stop
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
            "model": answer.model,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": answer.usage,
            "service_tier": "default",
            "system_fingerprint": "fp_fake0001",
        }

    async def write_stream(self, resp: web.StreamResponse, answer: Answer) -> None:
        reply, usage, model = answer.reply, answer.usage, answer.model
        include_usage = bool((answer.body.get("stream_options") or {}).get("include_usage"))
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

        async def send_text(text: str) -> None:
            await send(choice({"role": "assistant", "content": "", "refusal": None}))
            for piece in pieces(text):
                await send(choice({"content": piece}))

        text = reply.text or ""
        if answer.error is not None:
            await send_text(text)
            await resp.write(f"data: {json.dumps(answer.error)}\n\n".encode())
            return

        if isinstance(reply, TextReply):
            await send_text(text)
            finish = reply.stop
        else:
            if text:
                await send_text(text)
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

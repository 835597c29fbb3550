"""A fake Google Gemini API (``models/{model}:generateContent``) on 127.0.0.1 for the real ``google-genai`` SDK.

```python
async with FakeGemini() as fake:                 # aiohttp on 127.0.0.1, port 0
    fake.script_text("hi")                       # one scripted entry answers one request
    fake.script_tool_call("lookup", {"q": "x"})  # a functionCall part
    fake.script_error(429, "RESOURCE_EXHAUSTED")  # {"error": {"code", "message", "status"}}
    client = genai.Client(api_key="test", http_options=types.HttpOptions(base_url=fake.base_url))
    fake.requests[0].body  # {"contents": [...], "systemInstruction": {...}, "generationConfig": {...}}
```

The SDK posts to ``{base_url}/{api_version}/models/{model}:generateContent`` (``v1beta`` by
default) with the key in ``x-goog-api-key``; the body and answer are the REST shapes (camelCase).
Usage is ``usageMetadata`` at about 4 characters a token; ``cachedContentTokenCount`` is the
prefix of the ``contents`` (as JSON) shared with an earlier request, like implicit caching.
``:streamGenerateContent?alt=sse`` answers the same reply as server-sent events: the text in
word-ish pieces (a chunk each), function calls in one chunk, then a last chunk with the
``finishReason`` and the ``usageMetadata``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.support.fakes.local_server import (
    ErrorReply,
    ScriptedServer,
    TextReply,
    ToolCallsReply,
    approx_tokens,
    pieces,
    random_id,
)

__all__ = ["FakeGemini", "GeminiCall", "GeminiReply"]

_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
           429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


@dataclass(frozen=True)
class GeminiCall:
    """One ``functionCall`` part."""

    name: str
    args: Mapping[str, Any]
    id: str


GeminiReply = TextReply | ToolCallsReply[GeminiCall]


class FakeGemini(ScriptedServer[GeminiReply]):
    """See the module docstring; ``api_key``: any other key gets the API's 400 ``API_KEY_INVALID``."""

    name = "fake Gemini"

    def __init__(self, *, default_text: str = "Hello from the fake Gemini.", api_key: str | None = None) -> None:
        super().__init__(default_text=default_text)
        self.api_key = api_key
        self._seen: list[str] = []

    @property
    def base_url(self) -> str:
        """For ``HttpOptions(base_url=...)`` (and ``llm.providers.google.base_url``)."""
        return f"http://127.0.0.1:{self.port}"

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/{version}/models/{call}", self._handle)

    # -- the replies -------------------------------------------------------------------

    def text_reply(self, text: str, **kw: Any) -> GeminiReply:
        """``finish``: the finishReason (``MAX_TOKENS`` for a cut answer); ``usage``: usageMetadata fields;
        ``thinking``: a thought part (``"thought": true``) before the text, as ``includeThoughts`` returns."""
        return TextReply(text, kw.pop("finish", "STOP"), usage=kw.pop("usage", None), thinking=kw.pop("thinking", None))

    def tool_calls_reply(self, calls: Sequence[Any], *, text: str | None = None) -> GeminiReply:
        made = tuple(GeminiCall(c[0], dict(c[1]), c[2] if len(c) > 2 else f"call_{random_id(8)}") for c in calls)
        return ToolCallsReply(made, text)

    def error_reply(self, status: int, kind: str, message: str | None = None,
                    headers: Mapping[str, str] | None = None, **kw: Any) -> ErrorReply:
        """``kind``: the error ``status`` (RESOURCE_EXHAUSTED...); the body is Google's error shape."""
        body = {"error": {"code": status, "message": message or f"fake {kind or _STATUS.get(status, 'ERROR')}",
                          "status": kind or _STATUS.get(status, "UNKNOWN")}}
        return ErrorReply(status, body, dict(headers or {}))

    # -- serving -------------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = (await self.record(request)).body
        model, _, method = request.match_info["call"].partition(":")
        if method not in ("generateContent", "streamGenerateContent"):
            return self.error_response(self.error_reply(404, "NOT_FOUND", f"method {method!r} is not served"))
        if self.api_key is not None and request.headers.get("x-goog-api-key") != self.api_key:
            return self.error_response(self.error_reply(400, "INVALID_ARGUMENT",
                                                        "API key not valid. Please pass a valid API key."))
        if not isinstance(body, dict) or not body.get("contents"):
            return self.error_response(self.error_reply(400, "INVALID_ARGUMENT", "contents is not specified"))
        reply = await self.next_reply()
        fault = self.wire_fault(request, reply)
        if fault is not None:
            return fault
        assert isinstance(reply, (TextReply, ToolCallsReply))
        answer = self._answer(model, body, reply)
        if method == "generateContent":
            return web.json_response(answer)
        return await self._stream(request, answer)

    async def _stream(self, request: web.Request, answer: dict[str, Any]) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        [candidate] = answer["candidates"]
        chunks: list[list[dict[str, Any]]] = []
        for part in candidate["content"]["parts"]:
            if "text" in part:
                chunks += [[{"text": piece}] for piece in pieces(part["text"])]
            else:
                chunks.append([part])
        for parts in chunks:
            event = {"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}]}
            await resp.write(f"data: {json.dumps(event)}\r\n\r\n".encode())
        last = {"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]},
                                "finishReason": candidate["finishReason"], "index": 0}],
                "usageMetadata": answer["usageMetadata"], "modelVersion": answer["modelVersion"]}
        await resp.write(f"data: {json.dumps(last)}\r\n\r\n".encode())
        await resp.write_eof()
        return resp

    def _answer(self, model: str, body: dict[str, Any], reply: GeminiReply) -> dict[str, Any]:
        parts: list[dict[str, Any]] = []
        thoughts = 0
        if isinstance(reply, TextReply):
            if reply.thinking is not None:
                parts.append({"text": reply.thinking, "thought": True})
                thoughts = max(1, approx_tokens(reply.thinking))
            parts.append({"text": reply.text})
            finish, output = reply.stop, max(1, approx_tokens(reply.text))
        else:
            if reply.text:
                parts.append({"text": reply.text})
            parts += [{"functionCall": {"id": c.id, "name": c.name, "args": dict(c.args)}} for c in reply.calls]
            finish = "STOP"
            output = approx_tokens(reply.text or "") + sum(4 + approx_tokens(c.name + json.dumps(c.args))
                                                           for c in reply.calls)
        usage = self._usage(body, output)
        if thoughts:
            usage.update(thoughtsTokenCount=thoughts, totalTokenCount=usage["totalTokenCount"] + thoughts)
        usage.update(reply.usage or {})
        return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish, "index": 0}],
                "usageMetadata": usage, "modelVersion": model, "responseId": random_id(16)}

    def _usage(self, body: dict[str, Any], output: int) -> dict[str, Any]:
        system = json.dumps(body.get("systemInstruction") or {}, sort_keys=True)
        prompt_text = system + json.dumps(body["contents"], sort_keys=True)
        shared = max((_common_prefix(prompt_text, seen) for seen in self._seen), default=0)
        self._seen.append(prompt_text)
        prompt = approx_tokens(prompt_text)
        usage: dict[str, Any] = {"promptTokenCount": prompt, "candidatesTokenCount": output,
                                 "totalTokenCount": prompt + output}
        if shared:
            usage["cachedContentTokenCount"] = min(prompt, shared // 4)
        return usage


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i

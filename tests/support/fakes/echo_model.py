"""A fake OpenAI-compatible model with a fixed latency that answers ``ECHO <question>``.

For tests and benchmarks that drive a real ``sabha run`` process: each answer names the
question it answers, so a test can count, per message, whether it was answered, and how
often. ``/v1/chat/completions`` only (no tools); a request with ``stream: true`` (the default of a provider
that sends one where the answer is watched, issue 38) gets the same answer as server-sent events, word by
word; the reply echoes the last
user message's first line. User memory's extractions (recognised by their instructions) are
answered with no facts and counted apart, in ``memory_calls``, never in ``calls`` or ``bodies``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

from aiohttp import web

from tests.support.fakes.local_server import MEMORY_MARKER, LocalServer

__all__ = ["EchoModel"]


class EchoModel(LocalServer):
    """See the module docstring."""

    name = "EchoModel"

    def __init__(self, latency: float = 0.2) -> None:
        super().__init__()
        self.latency = latency
        self.calls = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.questions: list[str] = []
        self.bodies: list[dict[str, Any]] = []  # every request body, in order
        self.started: list[float] = []  # time.monotonic() as each of ``bodies`` arrived
        self._open = asyncio.Event()  # cleared by hold(): requests wait at the model until release()
        self._open.set()
        self.memory_calls = 0
        self.abandoned = 0  # held requests whose client went away before release() (a turn stopped mid-call)

    def hold(self) -> None:
        """From now on every request waits at the model (counted in :attr:`in_flight`) until
        :meth:`release`: a test can stop every turn mid-turn however slow the machine is."""
        self._open.clear()

    def release(self) -> None:
        """Let the held requests (and all later ones) answer after the usual latency."""
        self._open.set()

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self._chat)

    @property
    def base_url(self) -> str:
        """For ``llm.providers.openai.base_url``."""
        return f"http://127.0.0.1:{self.port}/v1"

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body: dict[str, Any] = await request.json()
        if MEMORY_MARKER in await request.read():  # a memory extraction, kept apart (see the module docstring)
            self.memory_calls += 1
            return web.json_response({
                "id": f"chatcmpl-memory{self.memory_calls}", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model", "echo"), "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                                                              "total_tokens": 2},
                "choices": [{"index": 0, "message": {"role": "assistant", "content": '{"facts": []}'},
                             "finish_reason": "stop"}]})
        self.bodies.append(body)
        self.started.append(time.monotonic())
        self.calls += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if not await self._held(request):
                return web.Response(status=499)
            await asyncio.sleep(self.latency)
        finally:
            self.in_flight -= 1
        question = ""
        for message in reversed(body.get("messages") or []):
            if message.get("role") == "user":
                content = message.get("content")
                question = content if isinstance(content, str) else str(content)
                break
        question = (question.strip().splitlines() or [""])[0]
        self.questions.append(question)
        text = f"ECHO {question}"
        prompt = sum(len(str(m)) for m in body.get("messages") or []) // 4
        if body.get("stream"):
            return await self._stream(request, body, text, prompt)
        return web.json_response({
            "id": f"chatcmpl-echo{self.calls}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "echo"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": 3, "total_tokens": prompt + 3},
        })

    async def _held(self, request: web.Request) -> bool:
        """Wait while :meth:`hold` holds requests; False (counted in :attr:`abandoned`) when the client closed the
        connection meanwhile."""
        try:
            while not self._open.is_set():
                transport = request.transport
                if transport is None or transport.is_closing():
                    self.abandoned += 1
                    return False
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(0.02):
                        await self._open.wait()
        except asyncio.CancelledError:  # the server cancels the handler of a connection that was closed
            self.abandoned += 1
            raise
        return True

    async def _stream(self, request: web.Request, body: dict[str, Any], text: str, prompt: int,
                      ) -> web.StreamResponse:
        """``text`` as OpenAI's chunks (a word each), the usage chunk when asked for, then ``[DONE]``."""
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        base = {"id": f"chatcmpl-echo{self.calls}", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": body.get("model", "echo")}
        words = text.split(" ")
        pieces = [{"role": "assistant", "content": ""}, *({"content": w if not i else " " + w}
                                                         for i, w in enumerate(words))]
        for n, delta in enumerate(pieces):
            finish = "stop" if n == len(pieces) - 1 else None
            chunk = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            await resp.write(f"data: {json.dumps(chunk)}\n\n".encode())
        if (body.get("stream_options") or {}).get("include_usage"):
            usage = {"prompt_tokens": prompt, "completion_tokens": 3, "total_tokens": prompt + 3}
            await resp.write(f"data: {json.dumps({**base, 'choices': [], 'usage': usage})}\n\n".encode())
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp

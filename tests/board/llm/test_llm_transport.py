"""The HTTP under the OpenAI and Anthropic SDKs (issue 44, cpu48): aiohttp, through the SDKs' own
``DefaultAioHttpClient``, and a non-streamed answer read once from the raw response.

Through the real SDKs, wired from config, against the wire-format fakes on 127.0.0.1: the transport is the
SDK's aiohttp one; a dropped connection is still a connection error (retried, recorded as ``connection``, not
as a timeout); a proxy named in the environment (``HTTP_PROXY``) is still used; the answer's tool calls, usage and
stop reason come through; one client is made per provider and reused.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from board.app import Board
from board.llm.anthropic import AnthropicProvider
from board.llm.errors import ProviderSettings
from board.llm.openai import OpenAIProvider
from tests.support.fakes.anthropic_api import FakeAnthropic
from tests.support.fakes.local_server import serve_locally
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.llm import FAST_RETRY_YAML, configured_board, envelope

Fake = FakeOpenAI | FakeAnthropic
MODELS = {"openai": (FakeOpenAI, "gpt-4o-mini"), "anthropic": (FakeAnthropic, "claude-sonnet-4-6")}


def _url(fake: Fake) -> str:
    return fake.base_url if isinstance(fake, FakeOpenAI) else fake.url


async def _board(tmp_path: Path, workspace: Path, provider: str, fake: Fake) -> Board:
    return await configured_board(tmp_path, workspace, f"""
llm:
  model: {provider}:{MODELS[provider][1]}
{FAST_RETRY_YAML}
  providers:
    {provider}: {{base_url: "{_url(fake)}", api_key: "k-test"}}
""")


@pytest.mark.parametrize("provider", list(MODELS))
async def test_the_sdk_sends_over_aiohttp(provider: str) -> None:
    """The SDK's client has the SDK's aiohttp transport (its ``aiohttp`` extra), not httpx's default."""
    async with MODELS[provider][0]() as fake:
        cls = OpenAIProvider if provider == "openai" else AnthropicProvider
        made = cls(ProviderSettings(api_key="k-test", base_url=_url(fake), timeout_s=7))
        try:
            client = made._client_or_error()
            transport = client._client._transport  # the httpx2 client the SDK sends through
            assert type(transport).__name__ == "AiohttpTransport", type(transport)
            assert client.timeout == 7
            assert made._client_or_error() is client  # one client per provider, reused
        finally:
            await made.close()


@pytest.mark.parametrize("provider", list(MODELS))
async def test_a_dropped_connection_is_a_connection_error_and_retried(
    tmp_path: Path, workspace: Path, provider: str
) -> None:
    async with MODELS[provider][0]() as fake:
        fake.script_disconnect()
        fake.script_text("Back again.")
        board = await _board(tmp_path, workspace, provider, fake)
        try:
            reply = await board.handle(envelope("hello?"))
            rows = await board.parts.db.fetchall("SELECT outcome FROM llm_calls ORDER BY id")
        finally:
            await board.close()
    assert reply.text == "Back again." and not reply.degraded
    assert [r["outcome"] for r in rows] == ["connection", "ok"]


@pytest.mark.parametrize("provider", list(MODELS))
async def test_the_answer_is_read_from_its_json(tmp_path: Path, workspace: Path, provider: str) -> None:
    """Text, tool calls (arguments as sent), usage with cache reads and the stop reason, through the raw answer."""
    from tests.support.llm import LookupTool

    async with MODELS[provider][0]() as fake:
        fake.script_tool_call("lookup", {"q": "laptops"})
        fake.script_text("GST on laptops is 18%.")
        board = await _board(tmp_path, workspace, provider, fake)
        lookup = LookupTool()
        board.parts.tools.register(lookup.tool())
        try:
            reply = await board.handle(envelope("@finance what GST on laptops?"))
            rows = await board.parts.db.fetchall(
                "SELECT outcome, input_tokens, cache_read_tokens, output_tokens FROM llm_calls ORDER BY id")
        finally:
            await board.close()
    assert reply.text == "GST on laptops is 18%." and not reply.degraded
    assert lookup.seen[0][0] == {"q": "laptops"}
    assert [r["outcome"] for r in rows] == ["ok", "ok"]
    assert all(r["input_tokens"] + r["cache_read_tokens"] > 0 and r["output_tokens"] > 0 for r in rows)


@pytest.fixture
async def forward_proxy() -> AsyncIterator[tuple[str, list[str]]]:
    """A plain HTTP forward proxy on 127.0.0.1: it passes each request on and records its absolute URL."""
    seen: list[str] = []

    async def forward(request: web.Request) -> web.StreamResponse:
        seen.append(str(request.url))
        headers = {k: v for k, v in request.headers.items()
                   if k.lower() not in ("host", "proxy-connection", "proxy-authorization", "content-length")}
        async with aiohttp.ClientSession(trust_env=False) as http, http.request(
                request.method, str(request.url), headers=headers, data=await request.read()) as answer:
            body = await answer.read()
            out = {k: v for k, v in answer.headers.items()
                   if k.lower() not in ("content-length", "transfer-encoding", "content-encoding", "connection")}
            return web.Response(status=answer.status, body=body, headers=out)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", forward)
    runner, port = await serve_locally(app)
    try:
        yield f"http://127.0.0.1:{port}", seen
    finally:
        await runner.cleanup()


@pytest.mark.parametrize("provider", list(MODELS))
async def test_a_proxy_in_the_environment_is_used(
    tmp_path: Path, workspace: Path, provider: str, forward_proxy: tuple[str, list[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    proxy, seen = forward_proxy
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", proxy)
    monkeypatch.setenv("http_proxy", proxy)
    async with MODELS[provider][0]() as fake:
        fake.script_text("Through the proxy.")
        board = await _board(tmp_path, workspace, provider, fake)
        try:
            reply = await board.handle(envelope("hello?"))
        finally:
            await board.close()
    assert reply.text == "Through the proxy." and not reply.degraded
    assert len(fake.requests) == 1
    assert any(url.startswith(_url(fake).rstrip("/")) for url in seen), seen

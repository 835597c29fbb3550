"""The board as an MCP server over streamable HTTP on a real ``sabha run`` (Telegram on the fake Bot API, the
offline model), driven by the official SDK's own streamable-HTTP client.

With the owner's token the client lists the tools, asks an advisor, convenes a meeting (progress notifications
arrive while it runs) and reads its decision back with ``list_decisions``. Without the token, with another
one, or with another scheme, every request is answered 401 with ``WWW-Authenticate: Bearer``, nothing of the
board is reached (no advisor is asked), and the daemon's log says what was refused without either token's
value. The daemon then stops cleanly on SIGTERM.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import httpx2
import pytest
from aiohttp import ClientSession
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp_types import Implementation

from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import TOKEN

OWNER_TOKEN = "owner-token-for-the-mcp-endpoint-0123456789"
WRONG_TOKEN = "someone-elses-token-9876543210-abcdefghij"
BOUND_S = 300.0  # a bound for a hung daemon, not a measure of speed
CALL = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "ask_advisor", "arguments": {"role": "critic", "question": "refused question?"}}}


def _client(url: str, token: str | None) -> tuple[httpx2.AsyncClient, Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(BOUND_S))
    return http, Client(streamable_http_client(url, http_client=http),
                        client_info=Implementation(name="http agent", version="1"), read_timeout_seconds=BOUND_S)


@pytest.fixture
async def daemon(tmp_path: Path, fake: FakeTelegramAPI) -> SabhaProcess:
    config = write_config(tmp_path, fake, None)  # the offline model
    text = config.read_text(encoding="utf-8")
    assert "\n  port: 0\n" in text
    section = '\n  port: 0\n  mcp: {enabled: true, token: "${SABHA_MCP_TOKEN}"}\n'
    config.write_text(text.replace("\n  port: 0\n", section, 1), encoding="utf-8")
    process = SabhaProcess(config, env={"TELEGRAM_BOT_TOKEN": TOKEN, "SABHA_MCP_TOKEN": OWNER_TOKEN})
    await process.start()
    try:
        yield process  # type: ignore[misc]
    finally:
        await process.close()


async def test_the_sdk_client_with_the_token_convenes_a_meeting_and_reads_its_decision(daemon: SabhaProcess) -> None:
    await daemon.wait_for_log(r"MCP endpoint at http://127\.0\.0\.1:\d+/mcp")
    url = f"http://127.0.0.1:{daemon.port}/mcp"
    progress: list[str] = []

    async def told(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    http, client = _client(url, OWNER_TOKEN)
    async with http, client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == {"list_advisors", "ask_advisor", "convene_meeting", "list_decisions", "list_action_items"}
        asked = await client.call_tool("ask_advisor", {"role": "strategy", "question": "where do we play?"})
        assert not asked.is_error and asked.structured_content is not None, asked.content
        assert asked.structured_content["session"] == "board:strategy:mcp-http-agent"
        met = await client.call_tool("convene_meeting", {"topic": "should we raise prices by 10%?",
                                                         "members": ["finance", "content"]}, progress_callback=told)
        assert not met.is_error and met.structured_content is not None, met.content
        meeting = met.structured_content
        assert meeting["decision"]["recommendation"] and meeting["decision"]["action_items"]
        assert set(meeting["stances"]) == {"finance", "content"}
        assert "the chair recorded the decision" in progress and any("spoke" in line for line in progress)
        listed = await client.call_tool("list_decisions", {})
        assert listed.structured_content is not None
        [decision] = listed.structured_content["decisions"]
        assert decision["meeting_id"] == meeting["meeting_id"] and decision["status"] == "proposed"
        items = await client.call_tool("list_action_items", {"open_only": True})
        assert items.structured_content is not None and items.structured_content["action_items"]
    await daemon.wait_for_log(r"mcp: http-agent asks strategy")
    await daemon.wait_for_log(rf"mcp: http-agent convenes meeting {meeting['meeting_id']}")
    assert await daemon.signal(signal.SIGTERM) == 0


async def test_without_the_owners_token_every_request_is_refused_and_logged(daemon: SabhaProcess) -> None:
    await daemon.wait_for_log(r"MCP endpoint at ")
    url = f"http://127.0.0.1:{daemon.port}/mcp"
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    async with ClientSession() as http:
        for method, extra in (("POST", {}), ("POST", {"Authorization": f"Bearer {WRONG_TOKEN}"}),
                              ("POST", {"Authorization": f"Basic {OWNER_TOKEN}"}),
                              ("POST", {"Authorization": "Bearer "}), ("GET", {}), ("DELETE", {})):
            async with http.request(method, url, headers={**headers, **extra}, data=json.dumps(CALL)) as response:
                body = await response.text()
                assert response.status == 401, (method, extra, body)
                assert response.headers["WWW-Authenticate"].startswith('Bearer realm="sabha-mcp"')
                assert "Authorization: Bearer <token>" in body
    http_client, client = _client(url, WRONG_TOKEN)
    with pytest.raises(BaseExceptionGroup) as refused:  # the SDK's own client cannot even start a session
        async with http_client, client:
            await client.list_tools()
    assert refused.group_contains(MCPError, depth=None), refused.value
    await daemon.wait_for_log(r"mcp: refused POST /mcp from 127\.0\.0\.1: no Authorization header")
    await daemon.wait_for_log(r"mcp: refused POST /mcp from 127\.0\.0\.1: a wrong token")
    await daemon.wait_for_log(r"mcp: refused POST /mcp from 127\.0\.0\.1: an Authorization header that is not")
    assert await daemon.signal(signal.SIGTERM) == 0
    assert OWNER_TOKEN not in daemon.log and WRONG_TOKEN not in daemon.log
    # once a minute per address and problem: the GET and DELETE without a header are not logged again
    assert len([line for line in daemon.lines if "no Authorization header" in line]) == 1
    assert " asks " not in daemon.log and "refused question" not in daemon.log  # nothing reached an advisor


async def test_off_by_default_nothing_answers_at_the_path(tmp_path: Path, fake: FakeTelegramAPI) -> None:
    process = SabhaProcess(write_config(tmp_path, fake, None),
                           env={"TELEGRAM_BOT_TOKEN": TOKEN, "SABHA_MCP_TOKEN": OWNER_TOKEN})
    await process.start()
    try:
        async with ClientSession() as http, http.post(
                f"http://127.0.0.1:{process.port}/mcp", data=json.dumps(CALL),
                headers={"Authorization": f"Bearer {OWNER_TOKEN}", "Content-Type": "application/json"}) as response:
            assert response.status == 404
        assert await process.signal(signal.SIGTERM) == 0
    finally:
        await process.close()
    assert "MCP endpoint" not in process.log

"""WhatsApp durability on a real ``sabha run``: a burst of signed webhooks from many users,
SIGKILL in the middle of it, a restart, and Meta's at-least-once redelivery (everything not
acknowledged, and acknowledged ones again): every question is answered exactly once."""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientError, ClientSession, ClientTimeout

from board.workspace.paths import copy_default_workspace
from tests.support.daemon import SabhaProcess
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.telegram import eventually
from tests.support.whatsapp import APP_SECRET, NUMBER_ID, VERIFY_TOKEN, post, text_notification

# The bursts (a hundred messages through a real daemon, killed mid-way) run one after the other on one
# xdist worker (`make test`: --dist loadgroup), not two at once on a small machine.
pytestmark = pytest.mark.xdist_group("bursts")

BURST = 120
USERS = [f"1555000{n:04d}" for n in range(1, 9)]
_ECHO = re.compile(r"ECHO [^\n]*?\b(Q\d{3})\b")


def write_config(root: Path, graph: FakeGraphAPI, model: EchoModel, extra: Sequence[str] = ()) -> Path:
    """A workspace and a sabha.yaml with only the WhatsApp channel, on the fakes (``extra``: more top-level
    lines, e.g. an ``inbox:`` section)."""
    if not (root / "workspace").exists():
        copy_default_workspace(root / "workspace")
    numbers = ", ".join(f'"{u}"' for u in USERS)
    lines = ["workspace: ./workspace", "data_dir: ./sessions", "server:", "  host: 127.0.0.1", "  port: 0",
             "llm:", "  model: openai:echo", "  retry: {retries: 0}", "  providers:", "    openai:",
             "      api_key: test-key", f"      base_url: {model.base_url}", *extra,
             "whatsapp:", f'  phone_number_id: "{NUMBER_ID}"', "  access_token: ${WHATSAPP_ACCESS_TOKEN}",
             "  app_secret: ${WHATSAPP_APP_SECRET}", f"  verify_token: {VERIFY_TOKEN}",
             f"  graph_base_url: {graph.base_url}", f"  allowed_numbers: [{numbers}]"]
    path = root / "sabha.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def answered(graph: FakeGraphAPI) -> Counter[str]:
    return Counter(m for sent in graph.sent for m in _ECHO.findall(sent.body))


@pytest.fixture
def graph(fake_graph: FakeGraphAPI) -> FakeGraphAPI:
    return fake_graph


@pytest.fixture
def model(echo_model: EchoModel) -> EchoModel:
    echo_model.latency = 0.3
    return echo_model


async def _deliver(http: ClientSession, url: str, body: dict[str, Any]) -> int:
    try:
        status, _ = await post(http, url, body)
    except (TimeoutError, ClientError, OSError):
        return 0  # the process died under it: not acknowledged
    return status


async def test_sigkill_mid_burst_then_redelivery_loses_nothing_and_duplicates_nothing(
    tmp_path: Path, graph: FakeGraphAPI, model: EchoModel
) -> None:
    env = {"WHATSAPP_ACCESS_TOKEN": graph.token, "WHATSAPP_APP_SECRET": APP_SECRET}
    sabha = SabhaProcess(write_config(tmp_path, graph, model), env=env)
    bodies = [text_notification(USERS[i % len(USERS)], f"Q{i:03d} what do you think?") for i in range(BURST)]
    acked: list[dict[str, Any]] = []
    unacked: list[dict[str, Any]] = []
    try:
        await sabha.start()
        async with ClientSession(timeout=ClientTimeout(total=10)) as http:
            url = f"http://127.0.0.1:{sabha.port}/whatsapp/webhook"

            async def one(i: int, body: dict[str, Any]) -> None:
                await asyncio.sleep(i * 0.02)  # a burst over 2.4 s, several in flight at once
                status = await _deliver(http, url, body)
                (acked if status == 200 else unacked).append(body)

            burst = asyncio.gather(*(one(i, b) for i, b in enumerate(bodies)))
            # Half-way through the posts (turns running, answers going out), whatever the machine's speed.
            await eventually(lambda: len(acked) + len(unacked) >= BURST // 2, "half the burst posted", timeout=30)
            await sabha.signal(signal.SIGKILL)  # mid-burst: posts still going, turns running
            await burst
            assert unacked, "the kill came after the whole burst was acknowledged; not mid-burst"
            await sabha.start()
            url = f"http://127.0.0.1:{sabha.port}/whatsapp/webhook"
            # Meta retries what was not acknowledged, and delivers acknowledged ones again too.
            again = await asyncio.gather(*(_deliver(http, url, b) for b in unacked + acked))
            assert set(again) == {200}, again
        with contextlib.suppress(AssertionError):  # the tally below says what is missing
            await eventually(lambda: len(answered(graph)) >= BURST, "every answer", timeout=60)
        await asyncio.sleep(0.3)
    finally:
        await sabha.close()
    seen = answered(graph)
    lost = [f"Q{i:03d}" for i in range(BURST) if seen[f"Q{i:03d}"] == 0]
    duplicated = [f"Q{i:03d}" for i in range(BURST) if seen[f"Q{i:03d}"] > 1]
    print(f"\nwhatsapp webhook, SIGKILL mid-burst ({len(acked)} acknowledged, {len(unacked)} not): "
          f"lost {len(lost)}, duplicated {len(duplicated)}")
    assert (lost, duplicated) == ([], []), _rows(tmp_path, lost)


def _rows(root: Path, lost: list[str]) -> list[tuple[str, ...]]:
    """The inbox rows of the lost questions (why they were not answered)."""
    import sqlite3

    with sqlite3.connect(root / "sessions" / "sabha.db") as db:
        rows = db.execute("SELECT message_id, status, detail, envelope FROM inbound_messages").fetchall()
    return [(r[0], r[1], r[2]) for r in rows if any(m in (r[3] or "") for m in lost)]

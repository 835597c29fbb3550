"""What strangers may cost, on a real ``sabha run``: WhatsApp in public mode (the fake Graph API),
the offline model with a known price (so spend is deterministic), ten strangers each asking
for a board meeting against ``whatsapp.public_daily_usd``.

With meetings opened to strangers (``whatsapp.public_meetings: true``) every model call a
meeting makes counts against the channel's cap, checked before the call: the day's public
spend stays under the cap, and the next stranger's question gets the cap's polite line.
By default strangers may not convene meetings: each gets one line saying so, and no model
is called. The owner is never held to the public cap."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
from pathlib import Path

import pytest
from aiohttp import ClientSession

from board.spending.allowance import MEETINGS_CLOSED
from board.spending.allowance import PUBLIC_CAP_REACHED as CAP_REACHED
from board.spending.budget import SENDER_REACHED
from board.workspace.paths import copy_default_workspace
from tests.support.daemon import REPO, SabhaProcess
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.telegram import eventually
from tests.support.whatsapp import APP_SECRET, NUMBER_ID, OWNER, VERIFY_TOKEN, post, text_notification

CAP_USD = 0.50
STRANGERS = [f"1555010{n:04d}" for n in range(10)]
LATECOMER = "15550199999"
#: USD per million tokens of the offline model (its usage is about 4 characters a token): a
#: meeting's call costs a few cents, so ten meetings would spend many times the cap.
PRICE = "{input: 15, output: 45}"


def write_config(root: Path, graph: FakeGraphAPI, *, meetings: bool | None, extra: tuple[str, ...] = ()) -> Path:
    """Only the WhatsApp channel, in public mode, the owner listed; the priced offline model."""
    if not (root / "workspace").exists():
        copy_default_workspace(root / "workspace")
    lines = ["workspace: ./workspace", "data_dir: ./sessions", "server:", "  host: 127.0.0.1", "  port: 0",
             "llm:", "  model: offline", "  prices:", f"    offline: {PRICE}",
             "whatsapp:", f'  phone_number_id: "{NUMBER_ID}"', "  access_token: ${WHATSAPP_ACCESS_TOKEN}",
             "  app_secret: ${WHATSAPP_APP_SECRET}", f"  verify_token: {VERIFY_TOKEN}",
             f"  graph_base_url: {graph.base_url}", "  access: public", f'  allowed_numbers: ["{OWNER}"]',
             f"  public_daily_usd: {CAP_USD}", "  public_rate_per_minute: 60"]
    if meetings is not None:
        lines.append(f"  public_meetings: {'true' if meetings else 'false'}")
    lines += extra
    path = root / "sabha.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _db(root: Path) -> sqlite3.Connection:
    return sqlite3.connect(root / "sessions" / "sabha.db", timeout=10)


def spend(root: Path, *, strangers_only: bool = False) -> tuple[int, float]:
    """(model calls, USD) recorded today (for anyone but the owner, with ``strangers_only``)."""
    where = f"WHERE COALESCE(sender, '') != 'whatsapp:{OWNER}'" if strangers_only else ""
    with _db(root) as conn:
        calls, usd = conn.execute(f"SELECT COUNT(*), COALESCE(SUM(cost_usd), 0) FROM llm_calls {where}").fetchone()
    return int(calls), float(usd)


def meetings(root: Path) -> list[tuple[str, str | None]]:
    """(status, stop reason) of every meeting."""
    try:
        with _db(root) as conn:
            return [(r[0], r[1]) for r in conn.execute("SELECT status, stop_reason FROM meetings")]
    except sqlite3.OperationalError:  # not created yet
        return []


@pytest.fixture
def graph(fake_graph: FakeGraphAPI) -> FakeGraphAPI:
    return fake_graph


async def _start(root: Path, graph: FakeGraphAPI, *, meetings: bool | None, extra: tuple[str, ...] = ()
                 ) -> tuple[SabhaProcess, str]:
    env = {"WHATSAPP_ACCESS_TOKEN": graph.token, "WHATSAPP_APP_SECRET": APP_SECRET}
    sabha = SabhaProcess(write_config(root, graph, meetings=meetings, extra=extra), env=env)
    await sabha.start()
    return sabha, f"http://127.0.0.1:{sabha.port}/whatsapp/webhook"


async def _ten_strangers_ask_for_meetings(http: ClientSession, url: str) -> None:
    codes = await asyncio.gather(*(post(http, url, text_notification(user, f"/meeting should we open office {i}?"))
                                   for i, user in enumerate(STRANGERS)))
    assert [code for code, _ in codes] == [200] * len(STRANGERS)


async def test_ten_strangers_meetings_stay_under_the_public_cap_and_the_next_question_is_refused(
    tmp_path: Path, graph: FakeGraphAPI
) -> None:
    sabha, url = await _start(tmp_path, graph, meetings=True)
    try:
        async with ClientSession() as http:
            await _ten_strangers_ask_for_meetings(http, url)
            # Every stranger is answered: a meeting, or (once the meetings already running spent the cap)
            # the cap's line. How many meetings start before the cap closes depends on timing: a lone
            # webhook's turn starts at once, so on a busy machine the first meeting may spend the cap
            # before the others are taken up (seen on CI: 60 s waiting for "ten meetings").
            await eventually(lambda: all(graph.texts_to(user) for user in STRANGERS), "every stranger answered",
                             timeout=60)
            assert meetings(tmp_path), "no meeting ran"
            await eventually(lambda: all(status == "ended" for status, _ in meetings(tmp_path)),
                             "every meeting ended", timeout=180)
            calls, usd = spend(tmp_path)
            print(f"\npublic mode, ten strangers convening meetings: {calls} model calls, ${usd:.4f} "
                  f"against a ${CAP_USD:.2f} cap ({usd / CAP_USD:.1f}x); stop reasons "
                  f"{sorted(reason or '?' for _, reason in meetings(tmp_path))}")
            assert usd <= CAP_USD, f"strangers spent ${usd:.4f}, over the ${CAP_USD:.2f} cap ({calls} calls)"
            assert calls > 0  # the meetings did run until the cap
            with _db(tmp_path) as conn:  # each call counted against the stranger who caused it, and the channel
                rows = conn.execute("SELECT DISTINCT sender, scope FROM llm_calls").fetchall()
            assert {scope for _, scope in rows} == {"public:whatsapp"}, rows
            assert {sender for sender, _ in rows} <= {f"whatsapp:{u}" for u in STRANGERS}, rows
            # The next stranger's question is refused with the cap's line, and calls no model.
            assert (await post(http, url, text_notification(LATECOMER, "what is our runway?")))[0] == 200
            await eventually(lambda: graph.texts_to(LATECOMER), "the latecomer's reply", timeout=30)
            assert graph.texts_to(LATECOMER) == [CAP_REACHED]
            # The owner is not held to the public cap: their question is answered (a model call).
            assert (await post(http, url, text_notification(OWNER, "owner marker")))[0] == 200
            await eventually(lambda: graph.texts_to(OWNER), "the owner's answer", timeout=30)
            assert graph.texts_to(OWNER)[0] != CAP_REACHED
            assert graph.texts_to(LATECOMER) == [CAP_REACHED]
            assert spend(tmp_path, strangers_only=True) == (calls, pytest.approx(usd))
    finally:
        await sabha.close()
    # The owner sees what strangers cost today against the cap.
    env = {**os.environ, "PYTHONPATH": str(REPO), "WHATSAPP_ACCESS_TOKEN": graph.token,
           "WHATSAPP_APP_SECRET": APP_SECRET}
    cli = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot.cli.main", "cost", "--config",
                                               str(tmp_path / "sabha.yaml"), stdout=asyncio.subprocess.PIPE,
                                               stderr=asyncio.subprocess.PIPE, env=env, cwd=tmp_path)
    out, err = await asyncio.wait_for(cli.communicate(), 60)
    assert cli.returncode == 0, err.decode()
    assert f"whatsapp.public_daily_usd: ${usd:.4f} of ${CAP_USD:.2f} spent by strangers" in out.decode(), out.decode()


async def test_by_default_strangers_may_not_convene_meetings_one_line_each_and_no_model_call(
    tmp_path: Path, graph: FakeGraphAPI
) -> None:
    sabha, url = await _start(tmp_path, graph, meetings=None)
    try:
        async with ClientSession() as http:
            await _ten_strangers_ask_for_meetings(http, url)
            # Plain words asking for one are refused the same way.
            assert (await post(http, url, text_notification(LATECOMER, "run a board meeting on our pricing")))[0] == 200
            everyone = [*STRANGERS, LATECOMER]
            await eventually(lambda: all(graph.texts_to(u) for u in everyone), "a line to each stranger", timeout=30)
            # A marker from the owner, answered after the strangers' messages: nothing more comes to them.
            assert (await post(http, url, text_notification(OWNER, "owner marker")))[0] == 200
            await eventually(lambda: graph.texts_to(OWNER), "the owner's answer", timeout=30)
            await asyncio.sleep(0.5)
            assert {u: graph.texts_to(u) for u in everyone} == {u: [MEETINGS_CLOSED] for u in everyone}
            assert meetings(tmp_path) == []
            calls, usd = spend(tmp_path, strangers_only=True)
            print(f"\npublic mode, meetings not open to strangers: {calls} model calls for strangers (${usd:.4f})")
            assert calls == 0
            # Nor through the chair's convene_meeting tool (the offline model calls a tool named in the text).
            ask = '[TOOL: convene_meeting ARG: {"topic": "should we open an office in Lisbon?"}]'
            assert (await post(http, url, text_notification(STRANGERS[0], ask)))[0] == 200
            await eventually(lambda: len(graph.texts_to(STRANGERS[0])) == 2, "the chair's answer", timeout=30)
            assert "not open to this user" in graph.texts_to(STRANGERS[0])[1]
            assert meetings(tmp_path) == []
    finally:
        await sabha.close()


def sender_spend(root: Path, user: str) -> float:
    with _db(root) as conn:
        (usd,) = conn.execute("SELECT COALESCE(SUM(cost_usd), 0) FROM llm_calls WHERE sender = ?",
                              (f"whatsapp:{user}",)).fetchone()
    return float(usd)


async def test_a_strangers_meeting_also_stops_at_their_own_daily_limit_and_others_are_still_answered(
    tmp_path: Path, graph: FakeGraphAPI
) -> None:
    per_sender = 0.15
    sabha, url = await _start(tmp_path, graph, meetings=True,
                              extra=("budget:", f"  per_sender_daily_usd: {per_sender}"))
    try:
        async with ClientSession() as http:
            first, second = STRANGERS[:2]
            assert (await post(http, url, text_notification(first, "/meeting should we open an office?")))[0] == 200
            await eventually(lambda: meetings(tmp_path) and all(s == "ended" for s, _ in meetings(tmp_path)),
                             "the meeting's end", timeout=120)
            assert meetings(tmp_path) == [("ended", "budget")]
            spent = sender_spend(tmp_path, first)
            print(f"\na stranger's meeting against budget.per_sender_daily_usd ${per_sender:.2f}: ${spent:.4f}")
            assert 0 < spent <= per_sender
            # Their next question gets the per-sender line; another stranger is still answered (the channel's
            # cap is not reached).
            assert (await post(http, url, text_notification(first, "and now?")))[0] == 200
            assert (await post(http, url, text_notification(second, "what is our runway?")))[0] == 200
            await eventually(lambda: graph.texts_to(second), "the other stranger's answer", timeout=30)
            await eventually(lambda: any(t == SENDER_REACHED for t in graph.texts_to(first)), "the limit's line",
                             timeout=30)
            assert graph.texts_to(second)[0] not in (CAP_REACHED, SENDER_REACHED)
    finally:
        await sabha.close()

"""Start-up that survives the network: a real ``sabha run`` with the Bot API unreachable.

Telegram down at start: the daemon runs anyway (HTTP server up, /healthz says the channel
is ``connecting`` and why, /readyz is 503 naming it), keeps retrying in the background,
and once the fake Bot API comes up on the same port it connects and answers. A token
Telegram rejects is the one fatal problem: exit code 2 and the fix, the token not shown.
"""

from __future__ import annotations

import json
import signal
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.support.daemon import SabhaProcess, write_config
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import OWNER, eventually


async def serve_again(fake: FakeTelegramAPI) -> None:
    """Bring a stopped fake Bot API back on the port it had (the daemon's config names it; the fake kept it while
    stopped, so no other test's server can have answered there meanwhile)."""
    await fake.restart()


def get(port: int, path: str) -> tuple[int, Any]:
    """GET a daemon endpoint: (status, JSON body)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


async def test_telegram_unreachable_at_start_is_retried_while_the_daemon_runs(
        tmp_path: Path, fake: FakeTelegramAPI, echo_model: EchoModel) -> None:
    config = write_config(tmp_path, fake, echo_model)
    await fake.stop()  # the Bot API is down when Sabha starts
    sabha = await SabhaProcess(config).start()
    try:
        await sabha.wait_for_log(r"telegram: cannot reach the Telegram Bot API .* retrying in the background")
        assert sabha.port is not None
        status, health = get(sabha.port, "/healthz")
        assert status == 200
        assert health["channels"]["telegram"]["state"] == "connecting"
        assert "cannot reach the Telegram Bot API" in health["channels"]["telegram"]["problem"]
        status, ready = get(sabha.port, "/readyz")
        assert status == 503
        assert any("telegram" in reason and "cannot reach" in reason for reason in ready["reasons"]), ready

        await serve_again(fake)
        await sabha.wait_for_log(r"telegram: reached the Bot API after \d+ retries", timeout=30)
        await sabha.wait_for_log(r"telegram: @\S+ running")
        fake.push_text(OWNER, OWNER, "Q001 are you there?")
        await eventually(lambda: any("ECHO Q001" in m.text for m in fake.sent_to(OWNER)), "the answer", timeout=20)
        status, health = get(sabha.port, "/healthz")
        assert health["channels"]["telegram"]["state"] == "running"
        assert health["channels"]["telegram"]["problem"] is None
        assert get(sabha.port, "/readyz")[0] == 200
        assert await sabha.signal(signal.SIGTERM) == 0
    finally:
        await sabha.close()


async def test_a_rejected_token_is_fatal_with_the_fix(tmp_path: Path, fake: FakeTelegramAPI) -> None:
    config = write_config(tmp_path, fake, None)
    sabha = SabhaProcess(config, env={"TELEGRAM_BOT_TOKEN": "999:not-the-token"})
    try:
        with pytest.raises(AssertionError, match=r"sabha exited \(2\)"):
            await sabha.start()
        assert "copy the token from @BotFather into TELEGRAM_BOT_TOKEN" in sabha.log
        assert "not-the-token" not in sabha.log
    finally:
        await sabha.close()

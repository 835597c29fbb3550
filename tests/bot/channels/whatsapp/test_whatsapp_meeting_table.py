"""WhatsApp shows the whole sequence of a meeting called there (issue 40): a real ``sabha run`` on the fake Graph
API, a scripted board model whose round 1 the test holds, and the owner signed in to the same daemon's web pages.

During round 1 the owner writes into the meeting on WhatsApp (a contribution, not echoed: the chat shows it) and
from the web page (``POST /ui/meetings/{id}/say``). Round 2's one message starts with the web's contribution
(``🗣 the owner (via web): “…”``) above the members' statements; the WhatsApp one is in no line.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from aiohttp import ClientSession, ClientTimeout

from board.workspace.paths import copy_default_workspace
from bot.web.auth import COOKIE
from tests.support.daemon import SabhaProcess
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.meeting_table import TableModel, db_rows, llm_lines
from tests.support.telegram import eventually
from tests.support.whatsapp import APP_SECRET, NUMBER_ID, OWNER, VERIFY_TOKEN, post, text_notification

TOPIC = "Should we open a Pune office?"
FROM_CHAT = "finance, redo it with 20% churn"
FROM_WEB = "Check the hiring pipeline first"
JSON = {"Accept": "application/json"}


def _web_link(config: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SABHA_")}
    env.update(PYTHONPATH=str(Path(__file__).resolve().parents[4]))
    done = subprocess.run([sys.executable, "-m", "bot.cli", "web", "link", "--config", str(config)],
                          capture_output=True, text=True, env=env, cwd=config.parent, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def _hidden(page: str, name: str) -> str:
    found = re.search(rf'name="{name}"(?: id="[^"]*")? value="([^"]*)"', page)
    assert found, f"no {name} field on the page"
    return found.group(1)


async def _say_on_web(http: ClientSession, base: str, config: Path, meeting_id: str, text: str) -> None:
    """Sign in with the real ``sabha web link`` and write into the meeting from its live page."""
    async with http.post(f"{base}/ui/login", data={"token": _web_link(config).split("token=")[1]},
                         allow_redirects=False) as r:
        assert r.status == 303, await r.text()
        cookie = re.search(rf"{COOKIE}=([^;]+)", r.headers["Set-Cookie"])
        assert cookie is not None
        jar = {"Cookie": f"{COOKIE}={cookie.group(1)}"}
    async with http.get(f"{base}/ui/meetings/{meeting_id}", headers={"Accept": "text/html", **jar}) as r:
        assert r.status == 200, await r.text()
        page = await r.text()
    sent = {"csrf": _hidden(page, "csrf"), "message_id": _hidden(page, "message_id"), "text": text}
    async with http.post(f"{base}/ui/meetings/{meeting_id}/say", data=sent, headers={**JSON, **jar}) as r:
        assert r.status == 200, await r.text()


async def test_round_2s_message_starts_with_the_webs_contribution(tmp_path: Path, fake_graph: FakeGraphAPI) -> None:
    copy_default_workspace(tmp_path / "workspace")
    async with TableModel() as model:
        model.hold(1)
        config = tmp_path / "sabha.yaml"
        config.write_text("\n".join([
            "workspace: ./workspace", "data_dir: ./sessions", "server:", "  host: 127.0.0.1", "  port: 0",
            *llm_lines(model), "board:", "  meetings:", "    agent_timeout_s: 600", "    max_duration_s: 3600",
            "    max_turns_per_agent: 2",
            "whatsapp:", f'  phone_number_id: "{NUMBER_ID}"', "  access_token: ${WHATSAPP_ACCESS_TOKEN}",
            "  app_secret: ${WHATSAPP_APP_SECRET}", f"  verify_token: {VERIFY_TOKEN}",
            f"  graph_base_url: {fake_graph.base_url}", f"  api_version: {fake_graph.version}",
            f'  allowed_numbers: ["{OWNER}"]']) + "\n", encoding="utf-8")
        sabha = SabhaProcess(config, env={"WHATSAPP_ACCESS_TOKEN": fake_graph.token,
                                          "WHATSAPP_APP_SECRET": APP_SECRET})
        try:
            await sabha.start()
            hook = f"http://127.0.0.1:{sabha.port}/whatsapp/webhook"
            async with ClientSession(timeout=ClientTimeout(total=60)) as http:
                status, _ = await post(http, hook, text_notification(OWNER, f"/meeting {TOPIC}"))
                assert status == 200
                await model.reach(1)
                meeting_id = str(db_rows(tmp_path, "SELECT id FROM meetings WHERE status = 'running'")[0][0])
                status, _ = await post(http, hook, text_notification(OWNER, FROM_CHAT))
                assert status == 200
                await eventually(lambda: any("Noted for round 2" in b for b in fake_graph.texts_to(OWNER)),
                                 "the owner's note on WhatsApp")
                await _say_on_web(http, f"http://127.0.0.1:{sabha.port}", config, meeting_id, FROM_WEB)
            model.release(1)
            await eventually(lambda: any(b.startswith("*Minutes*") for b in fake_graph.texts_to(OWNER)),
                             "the minutes on WhatsApp", timeout=240)
        finally:
            await sabha.close()
    bodies = fake_graph.texts_to(OWNER)
    rounds = [b for b in bodies if b.startswith("*Round ")]
    assert [b.split("*")[1] for b in rounds] == ["Round 1", "Round 2"], [b[:80] for b in bodies]
    first_line = rounds[1].split("\n\n")[1]
    assert first_line == f"🗣 the owner (via web): \u201c{FROM_WEB}\u201d", rounds[1][:300]
    assert "🗣" not in rounds[0]
    assert all(FROM_CHAT not in b for b in rounds), "a contribution written on WhatsApp is echoed"
    assert rounds[1].index(first_line) < rounds[1].index("\n\n*", len("*Round 2*"))  # above the statements

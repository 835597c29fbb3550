"""Memory that tidies itself through the real terminal (issue 43): facts said in ``sabha chat`` (piped, the offline
extractor), then ``sabha memory consolidate`` with the cheap model on a fake OpenAI-compatible server (its plan
scripted), ``sabha memory changes`` shows the diff, ``sabha memory undo`` puts every fact back as it was; the
person's correction is never changed. Subprocesses on a board made by ``sabha init``, on both backends."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from board.storage import Dialect
from bot.app import open_state_db
from bot.config.load import load_config
from tests.support.fakes.openai_api import FakeOpenAI

REPO = Path(__file__).resolve().parents[3]  # this checkout's code, not an installed one
SAID = ("Hi, I'm based in Pune.\nI work at Acme Labs.\nPlease call me Asha.\nMy city is Pune, Maharashtra.\n"
        "My company is Acme Corp.\nPlease call me Asha Rao.\n")


@pytest.fixture(autouse=True)
def _private_personal_board(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


async def sabha(cwd: Path, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    """``sabha *args`` in ``cwd`` (this checkout's code); (exit code, stdout, stderr). Ended whatever happens."""
    env = {k: v for k, v in os.environ.items() if k != "SABHA_CONFIG"}
    env["PYTHONPATH"] = str(REPO)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli.main", *args, cwd=cwd, env=env, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin else b""), 180)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


@pytest.fixture
def home(tmp_path: Path, backend: Dialect, request: pytest.FixtureRequest) -> Path:
    """A board made by ``sabha init``; its state on the test's backend (a fresh PostgreSQL database, which
    ``sabha`` migrates itself, when the test runs ``[postgres]``)."""
    env = {k: v for k, v in os.environ.items() if k != "SABHA_CONFIG"}
    env["PYTHONPATH"] = str(REPO)
    made = subprocess.run([sys.executable, "-m", "bot.cli.main", "init", str(tmp_path / "proj")], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=180)
    assert made.returncode == 0, made.stderr
    if backend is Dialect.POSTGRES:
        url = request.getfixturevalue("pg_url")
        with open(tmp_path / "proj" / "sabha.yaml", "a", encoding="utf-8") as fh:
            fh.write(f"\nstate:\n  url: {url}\n")
    return tmp_path / "proj"


def use_cheap_model(home: Path, base_url: str) -> None:
    """Point ``llm.cheap_model`` at the fake server (the advisors stay offline)."""
    path = home / "sabha.yaml"
    text = path.read_text(encoding="utf-8")
    cheap = ("  cheap_model: openai:cheap\n  retry: {retries: 0}\n  providers:\n    openai:\n      api_key: test-key\n"
             f"      base_url: {base_url}\n      stream: false\n")
    text, count = re.subn(r"(?m)^(  model: offline.*\n)", lambda m: m.group(1) + cheap, text)
    assert count == 1, text
    path.write_text(text, encoding="utf-8")


async def listed(home: Path) -> list[dict[str, str]]:
    code, out, err = await sabha(home, "memory", "list", "--json")
    assert code == 0, err
    return sorted(json.loads(out), key=lambda f: f["key"])


async def ids_of(home: Path, user: str) -> dict[str, int]:
    """key -> row id of ``user``'s facts, read from the state store the CLI uses."""
    async with await open_state_db(load_config(home / "sabha.yaml")) as db:
        rows = await db.fetchall('SELECT id, key FROM memory_facts WHERE "user"=?', (user,))
    return {str(r["key"]): int(r["id"]) for r in rows}


@pytest.mark.backends
async def test_consolidation_diff_and_undo_through_the_cli(home: Path) -> None:
    code, _out, err = await sabha(home, "chat", stdin=SAID)
    assert code == 0, err
    before = await listed(home)
    assert [(f["key"], f["value"]) for f in before] == [
        ("city", "Pune, Maharashtra"), ("company", "Acme Corp"), ("employer", "Acme Labs"), ("location", "Pune"),
        ("name", "Asha Rao")]
    user = before[0]["user"]
    ids = await ids_of(home, user)

    async with FakeOpenAI() as fake:
        use_cheap_model(home, fake.base_url)
        fake.script_text(json.dumps({
            "merge": [{"ids": [ids["location"], ids["city"]], "key": "city", "value": "Pune, Maharashtra"},
                      {"ids": [ids["name"]], "key": "name", "value": "Asha"}],  # the person corrected it: refused
            "expire": [{"id": ids["employer"], "reason": "contradicted", "by": ids["company"]}],
            "profile": "Asha Rao, based in Pune, Maharashtra; works at Acme Corp.",
        }))
        code, out, err = await sabha(home, "memory", "consolidate", user)
        assert code == 0, err
        assert len(fake.requests) == 1
        asked = json.dumps(fake.requests[0].body["messages"])
        assert "quoted data, not instructions" in asked and "Asha Rao" in asked and "fixed" in asked

    change_id = int(re.search(r"^change (\d+): ", out, re.M).group(1))  # type: ignore[union-attr]
    assert 'merged: city "Pune, Maharashtra" + location "Pune" -> city "Pune, Maharashtra"' in out
    assert 'expired (contradicted by company "Acme Corp"): employer "Acme Labs"' in out
    assert 'profile: (none) -> "Asha Rao, based in Pune, Maharashtra; works at Acme Corp."' in out
    assert "name" not in out.split("profile:")[0]  # the person's own word was not touched
    assert [(f["key"], f["value"]) for f in await listed(home)] == [
        ("city", "Pune, Maharashtra"), ("company", "Acme Corp"), ("name", "Asha Rao")]

    code, changes, err = await sabha(home, "memory", "changes", "--person", user, "--since", "1h")
    assert code == 0, err
    assert changes.splitlines()[0].startswith(f"change {change_id}: {user} at ") and \
        f"to undo: sabha memory undo {change_id}" in changes
    assert 'merged: city "Pune, Maharashtra" + location "Pune" -> city "Pune, Maharashtra"' in changes
    code, as_json, err = await sabha(home, "memory", "changes", "--json")
    assert code == 0 and [s["kind"] for s in json.loads(as_json)[0]["steps"]] == ["merged", "expired"], err

    code, out, err = await sabha(home, "memory", "undo", str(change_id))
    assert code == 0, err
    assert out.startswith(f"undid memory change {change_id} of {user}: 3 fact(s) restored")
    assert await listed(home) == before  # exactly the facts before the change, provenance and times included
    code, out, err = await sabha(home, "memory", "list", "--user", user)
    assert code == 0 and "profile (kept by consolidation)" not in out, err

    code, _out, err = await sabha(home, "memory", "undo", str(change_id))
    assert code == 2 and "undone already" in err and "Traceback" not in err
    code, _out, err = await sabha(home, "memory", "undo", "twelve")
    assert code == 2 and "'twelve' is no change id" in err and "Traceback" not in err
    code, _out, err = await sabha(home, "memory", "changes", "--since", "last tuesday")
    assert code == 2 and "--since 'last tuesday' cannot be read" in err
    code, out, err = await sabha(home, "memory", "changes")
    assert code == 0 and "[undone at " in out and "to undo" not in out, err


async def facts_and_changes(home: Path, user: str) -> tuple[list[tuple[str, str]], int]:
    async with await open_state_db(load_config(home / "sabha.yaml")) as db:
        rows = await db.fetchall('SELECT key, value FROM memory_facts WHERE "user"=? ORDER BY key', (user,))
        changes = await db.fetchall('SELECT id FROM memory_changes WHERE "user"=? AND undone_at IS NULL', (user,))
    return [(str(r["key"]), str(r["value"])) for r in rows], len(changes)


@pytest.mark.backends
async def test_a_kill_mid_run_leaves_the_old_facts_or_the_new_never_half(home: Path) -> None:
    """``sabha memory consolidate`` killed (SIGKILL) at moments after the model's plan left the fake server: each
    time the facts are exactly the old ones (no change recorded) or exactly the new ones (one change), never a
    mix; an applied change is undone through the CLI before the next try."""
    code, _out, err = await sabha(home, "chat", stdin=SAID)
    assert code == 0, err
    user = (await listed(home))[0]["user"]
    old, _ = await facts_and_changes(home, user)
    new = [("city", "Pune, Maharashtra"), ("company", "Acme Corp"), ("name", "Asha Rao")]
    seen: dict[str, int] = {"old": 0, "new": 0}
    env = {k: v for k, v in os.environ.items() if k != "SABHA_CONFIG"}
    env["PYTHONPATH"] = str(REPO)
    async with FakeOpenAI() as fake:
        use_cheap_model(home, fake.base_url)
        for delay_ms in (0, 2, 5, 10, 20, 40, 80, 160):
            ids = await ids_of(home, user)
            fake.script_text(json.dumps({
                "merge": [{"ids": [ids["location"], ids["city"]], "key": "city", "value": "Pune, Maharashtra"}],
                "expire": [{"id": ids["employer"], "reason": "contradicted", "by": ids["company"]}],
                "profile": "Asha Rao, based in Pune, Maharashtra."}))
            asked = len(fake.requests)
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot.cli.main", "memory", "consolidate", user, cwd=home, env=env,
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
            try:
                await fake.wait_for_requests(asked + 1, timeout=180)  # the plan is on its way back
                await asyncio.sleep(delay_ms / 1000)  # a different moment of the run each try, not a time budget
                if proc.returncode is None:
                    proc.kill()
            finally:
                if proc.returncode is None:
                    proc.kill()
                await proc.wait()
            facts, changes = await facts_and_changes(home, user)
            assert (facts, changes) in ((old, 0), (new, 1)), (delay_ms, facts, changes)
            seen["old" if changes == 0 else "new"] += 1
            if changes:
                code, _out, err = await sabha(home, "memory", "changes", "--json")
                change_id = json.loads(_out)[0]["id"]
                code, _out, err = await sabha(home, "memory", "undo", str(change_id))
                assert code == 0, err
                assert (await facts_and_changes(home, user)) == (old, 0)
    print(f"kills that left the old facts: {seen['old']}, the new: {seen['new']}")

"""``sabha meeting`` says what the meeting is expected to cost before it starts (a real subprocess on a
``sabha init`` board, the offline model priced in ``llm.prices`` so the estimate is not zero): above
``board.meetings.confirm_over_usd`` a script (stdin not a terminal) gets the estimate and exit 2 with nothing
spent and no meeting recorded; with ``--yes`` the meeting runs and the estimate is printed first."""

from __future__ import annotations

import asyncio
import sqlite3
import sys
from pathlib import Path

import yaml

from tests.support.cli import init_board, run_sabha


def _gated(folder: Path) -> None:
    config = yaml.safe_load((folder / "sabha.yaml").read_text(encoding="utf-8"))
    config["llm"]["prices"] = {"offline": {"input": 100.0, "output": 400.0}}
    config["board"]["meetings"] = {"confirm_over_usd": 0.05, "budget_usd": 1000, "max_turns_per_agent": 1}
    (folder / "sabha.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


async def test_a_dear_meeting_needs_yes_from_a_script_and_says_its_estimate(tmp_path: Path) -> None:
    folder, env = await init_board(tmp_path)
    _gated(folder)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "meeting", "Should we open a Pune office?", cwd=folder, env=env,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 120)
    finally:
        if proc.returncode is None:
            proc.kill()
    said = err.decode()
    assert proc.returncode == 2, said
    assert "sabha: Expected: about $" in said and "offline: $100 in / $400 out per million tokens" in said
    assert "above board.meetings.confirm_over_usd ($0.05): nothing was spent; run it again with --yes" in said
    assert out.decode() == ""
    with sqlite3.connect(folder / "sessions" / "sabha.db") as db:
        assert db.execute("SELECT COUNT(*) FROM meetings").fetchone() == (0,)
        assert db.execute("SELECT COUNT(*) FROM llm_calls").fetchone() == (0,)

    out_yes, err_yes = await run_sabha(folder, env, "meeting", "--yes", "Should we open a Pune office?")
    assert "sabha: Expected: about $" in err_yes and "Decision" in out_yes + err_yes
    with sqlite3.connect(folder / "sessions" / "sabha.db") as db:
        assert db.execute("SELECT COUNT(*) FROM meetings").fetchone() == (1,)

"""``sabha demo`` (issue 38): a fresh board's walk-through shows a Brier score at once, from a clearly
labelled demo history, and ``sabha demo --remove`` takes it away again without touching real data;
through the real ``sabha`` command in subprocesses on a ``sabha init`` board (the offline model)."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import pytest

from board.storage import StateURL
from tests.support.cli import init_board, run_sabha

SCORED = re.compile(r"^- (\w+): Brier (\d\.\d{3}) over (\d+) resolved", re.MULTILINE)


async def _sabha(folder: Path, env: dict[str, str], *args: str) -> tuple[int, str, str]:
    """``sabha *args``: (exit status, stdout, stderr), the process ended whatever happens."""
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot.cli", *args, cwd=folder, env=env,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 120)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    return proc.returncode or 0, out.decode(), err.decode()


@pytest.mark.backends
async def test_the_demo_history_gives_stats_a_score_at_once_and_goes_again(tmp_path: Path,
                                                                           state_url: StateURL | None) -> None:
    folder, env = await init_board(tmp_path)
    if state_url is not None:  # the board's state on the test's PostgreSQL
        with (folder / "sabha.yaml").open("a") as config:
            config.write(f"\nstate:\n  url: {state_url}\n")
    before, _ = await run_sabha(folder, env, "ask", "/stats")
    assert not SCORED.search(before), before
    added, _ = await run_sabha(folder, env, "demo")
    assert "demo" in added.lower() and "sabha demo --remove" in added, added
    listed, _ = await run_sabha(folder, env, "predictions", "list")  # the docs: your numbers are the open ones
    assert "demo-" not in listed, listed
    stats, _ = await run_sabha(folder, env, "ask", "/stats")
    scored = SCORED.findall(stats)
    assert len(scored) >= 4 and all(int(n) >= 5 for _role, _score, n in scored), stats
    assert len({score for _role, score, _n in scored}) > 1, stats  # advisors differ: a record, not a constant
    assert "demo" in stats.lower(), stats  # the score says where it comes from
    listed, _ = await run_sabha(folder, env, "meetings", "list")
    assert listed.count("[demo]") >= 5, listed
    again = await _sabha(folder, env, "demo")
    assert again[0] == 0 and "already" in again[1], again  # twice: nothing doubled
    assert SCORED.findall((await run_sabha(folder, env, "ask", "/stats"))[0]) == scored
    removed, _ = await run_sabha(folder, env, "demo", "--remove")
    assert "removed the demo history: 5 [demo] meetings" in removed, removed
    listed, _ = await run_sabha(folder, env, "meetings", "list")
    assert "[demo]" not in listed, listed


async def test_the_walk_through_order_works_and_removing_the_demo_keeps_the_real_meeting(tmp_path: Path) -> None:
    """The README's order: a meeting, a resolved prediction, /stats ("too few", and how to see a score),
    then ``sabha demo``; ``--remove`` leaves the real meeting and its predictions as they were."""
    folder, env = await init_board(tmp_path)
    await run_sabha(folder, env, "meeting", "--quiet", "Should we open a Pune office?")
    await run_sabha(folder, env, "predictions", "resolve", "1", "yes")
    empty, _ = await run_sabha(folder, env, "ask", "/stats")
    assert not SCORED.search(empty) and "sabha demo" in empty, empty  # says how to get there
    added, _ = await run_sabha(folder, env, "demo")
    assert "added a demo history" in added, added
    assert SCORED.search((await run_sabha(folder, env, "ask", "/stats"))[0])
    removed, _ = await run_sabha(folder, env, "demo", "--remove")
    assert "removed" in removed.lower(), removed
    listed, _ = await run_sabha(folder, env, "meetings", "list")
    assert "[demo]" not in listed and "Pune office" in listed, listed
    stats, _ = await run_sabha(folder, env, "ask", "/stats")
    assert not SCORED.search(stats) and "(n=1)" in stats and "1 open" in stats, stats  # the real ones stay
    nothing = await _sabha(folder, env, "demo", "--remove")
    assert nothing[0] == 0 and "no demo history" in nothing[1].lower(), nothing


async def test_the_demo_never_blurs_a_real_score(tmp_path: Path) -> None:
    folder, env = await init_board(tmp_path)
    for n in range(5):
        await run_sabha(folder, env, "meeting", "--quiet", f"Should we open office number {n + 1}?")
    listed, _ = await run_sabha(folder, env, "predictions", "list", "--role", "finance")
    numbers = re.findall(r"^#(\d+) finance", listed, re.MULTILINE)
    assert len(numbers) == 5, listed
    for number in numbers:
        await run_sabha(folder, env, "predictions", "resolve", number, "yes")
    refused = await _sabha(folder, env, "demo")
    assert refused[0] == 2 and "finance: 5 resolved" in refused[2] and refused[2].count("\n") == 1, refused
    listed, _ = await run_sabha(folder, env, "meetings", "list")
    assert "[demo]" not in listed, listed


async def test_the_demo_scores_the_boards_own_roster(tmp_path: Path) -> None:
    """On a board with another roster (``sabha``: investor, cto, analyst) the demo's advisors are that board's,
    not the default five: /stats scores investor, cto and analyst, and names nobody who does not sit there."""
    folder, env = await init_board(tmp_path)
    config = folder / "sabha.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("roster: board ", "roster: sabha "), encoding="utf-8")
    added, _ = await run_sabha(folder, env, "demo")
    assert "3 advisors" in added, added
    stats, _ = await run_sabha(folder, env, "ask", "/stats")
    assert sorted(role for role, _score, _n in SCORED.findall(stats)) == ["analyst", "cto", "investor"], stats
    assert not any(role in stats for role in ("research", "content", "finance", "strategy", "critic")), stats

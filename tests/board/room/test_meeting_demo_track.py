"""The chair's track records leave the demo out (issue 38 review): after ``sabha demo`` the made-up Brier
scores reached the chair's decision prompt in every later real meeting. A real ``sabha meeting`` after
``sabha demo``, on a model that records what it is asked: the chair's synthesis carries no demo record."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import init_board, run_sabha
from tests.support.fakes.echo_model import EchoModel


def _asked(body: dict[str, object]) -> str:
    messages = body.get("messages")
    return "\n".join(str(m.get("content")) for m in messages if isinstance(m, dict)) if isinstance(messages, list) \
        else ""


async def test_a_meeting_after_the_demo_gives_the_chair_no_made_up_track_record(tmp_path: Path) -> None:
    folder, env = await init_board(tmp_path)
    added, _ = await run_sabha(folder, env, "demo")
    assert "added a demo history" in added, added
    async with EchoModel(latency=0.01) as model:
        (folder / "sabha.yaml").write_text(
            "workspace: ./workspace\ndata_dir: ./sessions\nllm:\n  model: openai:echo\n  retry: {retries: 0}\n"
            f"  providers:\n    openai:\n      base_url: {model.base_url}\n      api_key: sk-test\n", encoding="utf-8")
        await run_sabha(folder, env, "meeting", "--quiet", "Should we open a Pune office?", timeout=300)
    syntheses = [asked for asked in map(_asked, model.bodies) if "You chaired a board meeting on" in asked]
    assert syntheses, [q[:80] for q in model.questions]
    for asked in syntheses:
        assert "Track records of the members" not in asked and "Brier" not in asked, asked

"""The roundtable as seed 004 writes it, through the real ``sabha roundtable`` command.

Three rounds unless asked to stop early; sequential, each debater seeing the whole debate so
far in full (the speakers before it in the same round too) with a prompt whose shared prefix
grows from speaker to speaker; the seed's temperatures and output limits; an answer cut by
the output limit ends at its last full sentence; a plain question works like the seed's
``run.sh``; the output is the seed's ``{"transcript", "summary"}`` JSON.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
from pathlib import Path
from typing import Any

from board.workspace.paths import copy_default_workspace
from tests.support.fakes.anthropic_api import FakeAnthropic
from tests.support.fakes.openai_api import FakeOpenAI

SABHA = [sys.executable, "-m", "bot.cli.main"]
#: the code under test, not the installed copy, in the ``sabha`` subprocesses
REPO = Path(__file__).resolve().parents[3]
QUESTION = "How can we reach AI startup CTOs?"
#: what each debater says, in the order they are asked: round by round, ARTIST, BUSINESS, TECH
SAID = [f"{who} in round {n} says: idea {who.lower()}-{n} is worth a test, and here is why in full detail."
        for n in (1, 2, 3) for who in ("ARTIST", "BUSINESS", "TECH")]
TASKS = json.dumps({"tasks": [{"task": "Monitor Crunchbase for Series A raises", "owner": "Builder"},
                              {"task": "Time outreach within two weeks of the raise", "owner": "FULLSEND"},
                              {"task": "Lead with congratulations and one insight", "owner": "Orchestrator"}]})


def _config(root: Path, model: FakeOpenAI | FakeAnthropic) -> Path:
    copy_default_workspace(root / "workspace")
    provider = f"openai: {{api_key: test-key-123456, base_url: {model.base_url}}}" if isinstance(model, FakeOpenAI) \
        else f'anthropic: {{api_key: "sk-ant-test-123456", base_url: "{model.url}"}}'
    lines = ["workspace: ./workspace", "data_dir: ./sessions", "llm:",
             f"  model: {'openai:gpt-4o-mini' if isinstance(model, FakeOpenAI) else 'anthropic:claude-sonnet-4-6'}",
             "  retry: {retries: 0}", "  providers:", f"    {provider}"]
    (root / "sabha.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


async def _sabha(args: list[str], cwd: Path, stdin: str | None = None,
                 extra_env: dict[str, str] | None = None) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SABHA_CONFIG", "ROUNDTABLE_MODEL", "SUMMARIZER_MODEL")}
    env.update(extra_env or {})
    env.update(XDG_DATA_HOME=str(cwd / "xdg"), PYTHONPATH=str(REPO))
    proc = await asyncio.create_subprocess_exec(
        *SABHA, *args, cwd=cwd, env=env, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin is not None else b""), 120)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def _text(message: dict[str, Any]) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)


def _prompt(body: dict[str, Any]) -> str:
    return "\n".join(_text(m) for m in body["messages"])


async def test_three_rounds_each_speaker_sees_the_whole_debate_so_far(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    for text in SAID:
        fake_openai.script_text(text)
    fake_openai.script_text(TASKS)
    home = _config(tmp_path, fake_openai)
    code, out, err = await _sabha(["roundtable"], home, stdin=json.dumps({"prompt": QUESTION}))
    assert code == 0, err + out
    data = json.loads(out)
    assert set(data) == {"transcript", "summary"}  # the seed's schema, nothing else
    assert "--- Round 3 ---" in data["transcript"] and "--- Round 4 ---" not in data["transcript"]
    assert data["summary"] == ["Monitor Crunchbase for Series A raises (Owner: Builder)",
                               "Time outreach within two weeks of the raise (Owner: FULLSEND)",
                               "Lead with congratulations and one insight (Owner: Orchestrator)"]
    bodies = [r.json for r in fake_openai.requests]
    assert len(bodies) == 10  # 3 rounds x 3 debaters, then the summarizer
    debaters = bodies[:9]
    # round 3, the third speaker (TECH): the two speakers before it in this round, in full, and all before
    third = _prompt(debaters[8])
    assert all(statement in third for statement in SAID[:8])
    assert "You are TECH, round 3 of 3" in third
    first = _prompt(debaters[0])
    assert QUESTION in json.dumps(debaters[0]) and "Nobody has spoken yet" in first
    # the prompt of each speaker begins with the previous speaker's, without its persona
    for before, after in itertools.pairwise(debaters):
        assert before["messages"][0] == after["messages"][0]  # the system prompt: the shared frame
        shared = before["messages"][1:-1]
        assert after["messages"][1:len(shared) + 1] == shared
        assert _text(before["messages"][-1]).startswith(_text(after["messages"][len(shared) + 1]))
    # the seed's brevity: temperature 0.8, at most 200 output tokens; the summarizer 0.3 and 300
    assert {(b["temperature"], b["max_tokens"]) for b in debaters} == {(0.8, 200)}
    assert (bodies[9]["temperature"], bodies[9]["max_tokens"]) == (0.3, 300)
    assert all(statement in _prompt(bodies[9]) for statement in SAID)


async def test_each_speaker_reads_the_debate_so_far_from_the_prompt_cache(
        tmp_path: Path, fake_anthropic: FakeAnthropic) -> None:
    for text in SAID:
        fake_anthropic.script_text(text)
    fake_anthropic.script_text(TASKS)
    home = _config(tmp_path, fake_anthropic)
    code, out, err = await _sabha(["roundtable", QUESTION], home)
    assert code == 0, err + out
    import sqlite3

    with sqlite3.connect(home / "sessions" / "sabha.db") as db:
        rows = db.execute("SELECT role, input_tokens, cache_read_tokens, cache_write_tokens FROM llm_calls "
                          "WHERE purpose = 'roundtable' ORDER BY id").fetchall()
    debaters = rows[:9]
    assert [r[0] for r in debaters] == ["artist", "business", "tech"] * 3 and rows[9][0] == "summarizer"
    # from the second speaker on, everything said before the previous speaker's turn comes from the cache
    for before, after in itertools.pairwise(debaters):
        assert after[2] >= before[2] + before[3] > 0
    print("\nrole        uncached  cache_read  cache_write")  # the figures of the roundtable's note
    for role, uncached, read, write in rows:
        print(f"{role:11s} {uncached:8d} {read:11d} {write:12d}")
    # what is not read from the cache (the newest statement, the speaker's persona and turn) does not grow
    # with the debate: a debater's uncached prompt is the same in round 3 as in round 2
    assert [r[1] for r in debaters[6:]] == [r[1] for r in debaters[3:6]]


async def test_an_answer_cut_by_the_output_limit_ends_at_its_last_full_sentence(
        tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.script_text("We should court CTOs like collectors. Then we invite them to a private preview wh",
                            finish_reason="length")
    fake_openai.script_text("No full sentence in this one because the limit cut it right in the mid",
                            finish_reason="length")
    fake_openai.script_text("Tech speaks fully.")
    fake_openai.script_text(TASKS)
    code, out, err = await _sabha(["roundtable", "--rounds", "1", QUESTION], _config(tmp_path, fake_openai))
    assert code == 0, err + out
    transcript = json.loads(out)["transcript"]
    assert "ARTIST: We should court CTOs like collectors.\n" in transcript
    assert "private preview" not in transcript and " wh" not in transcript
    assert "BUSINESS: No full sentence in this one because the limit cut it right in the\u2026\n" in transcript
    assert "TECH: Tech speaks fully." in transcript


async def test_a_summary_cut_by_the_output_limit_keeps_its_whole_tasks(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    for text in SAID[:3]:
        fake_openai.script_text(text)
    fake_openai.script_text(TASKS[:TASKS.index("Lead with") + 12], finish_reason="length")
    code, out, err = await _sabha(["roundtable", "--rounds", "1", QUESTION], _config(tmp_path, fake_openai))
    assert json.loads(out)["summary"] == ["Monitor Crunchbase for Series A raises (Owner: Builder)",
                                          "Time outreach within two weeks of the raise (Owner: FULLSEND)"]
    assert code == 0, err + out
    assert "cut by its output limit of 300 tokens: 2 whole task(s) kept (raise summarizer_max_tokens)" in err


async def test_early_stop_may_end_before_max_rounds(tmp_path: Path) -> None:
    env = {"XDG_DATA_HOME": str(tmp_path / "xdg")}
    code, _out, err = await _sabha(["init", str(tmp_path / "proj")], tmp_path, extra_env=env)
    assert code == 0, err
    code, out, err = await _sabha(["roundtable", "--early-stop", QUESTION], tmp_path / "proj")
    assert code == 0, err + out
    rounds = [line for line in json.loads(out)["transcript"].splitlines() if line.startswith("--- Round")]
    assert rounds == ["--- Round 1 ---", "--- Round 2 ---"]  # the offline debaters converge after round 2


async def test_parallel_debaters_see_the_earlier_rounds_only(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    for text in SAID[:6]:
        fake_openai.script_text(text)
    fake_openai.script_text(TASKS)
    request = json.dumps({"prompt": QUESTION, "max_rounds": 2, "parallel": True})
    code, out, err = await _sabha(["roundtable"], _config(tmp_path, fake_openai), stdin=request)
    assert code == 0, err + out
    bodies = [r.json for r in fake_openai.requests]
    assert len(bodies) == 7 and "--- Round 2 ---" in json.loads(out)["transcript"]
    assert all("Nobody has spoken yet" in _prompt(b) for b in bodies[:3])
    assert "--- Round 1 ---" in _prompt(bodies[5]) and "--- Round 2 ---" not in _prompt(bodies[5])


async def test_roundtable_and_summarizer_models_come_from_the_seeds_variables(
        tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    for text in SAID[:3]:
        fake_openai.script_text(text)
    fake_openai.script_text(TASKS)
    models = {"ROUNDTABLE_MODEL": "openai:debate-model", "SUMMARIZER_MODEL": "openai:summary-model"}
    code, out, err = await _sabha(["roundtable", "--rounds", "1", QUESTION], _config(tmp_path, fake_openai),
                                  extra_env=models)
    assert code == 0, err + out
    assert [r.json["model"] for r in fake_openai.requests] == ["debate-model"] * 3 + ["summary-model"]


def test_a_plain_question_runs_three_rounds_offline(tmp_path: Path) -> None:
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "SABHA_CONFIG"}
    env.update(XDG_DATA_HOME=str(tmp_path / "xdg"), PYTHONPATH=str(REPO))
    assert subprocess.run([*SABHA, "init", str(tmp_path / "proj")], cwd=tmp_path, env=env, capture_output=True,
                          timeout=60).returncode == 0
    result = subprocess.run([*SABHA, "roundtable", QUESTION], cwd=tmp_path / "proj", env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) == {"transcript", "summary"}
    assert [line for line in data["transcript"].splitlines() if line.startswith("---")] == \
        ["--- Round 1 ---", "--- Round 2 ---", "--- Round 3 ---"]
    assert 3 <= len(data["summary"]) <= 5 and all("(Owner: " in task for task in data["summary"])


async def test_gemini_debaters_and_a_claude_summarizer_as_the_seed_runs_them(tmp_path: Path) -> None:
    """Seed 004's mixed models: the debate on Gemini, the summary on Claude, both through their
    official SDKs (fake servers), chosen by ROUNDTABLE_MODEL / SUMMARIZER_MODEL, keyed by
    GOOGLE_API_KEY / ANTHROPIC_API_KEY from the environment."""
    from tests.support.fakes.gemini_api import FakeGemini

    google_key, anthropic_key = "gemini-test-key", "sk-ant-test-654321"
    async with FakeGemini(api_key=google_key) as gemini, FakeAnthropic(api_key=anthropic_key) as claude:
        for text in SAID:
            gemini.script_text(text)
        claude.script_text(TASKS)
        copy_default_workspace(tmp_path / "workspace")
        (tmp_path / "sabha.yaml").write_text(
            "workspace: ./workspace\ndata_dir: ./sessions\nllm:\n  model: anthropic:claude-sonnet-4-6\n"
            "  retry: {retries: 0}\n  providers:\n"
            f'    google: {{base_url: "{gemini.base_url}"}}\n    anthropic: {{base_url: "{claude.url}"}}\n',
            encoding="utf-8")
        env = {"ROUNDTABLE_MODEL": "google:gemini-2.5-flash", "SUMMARIZER_MODEL": "anthropic:claude-sonnet-4-6",
               "GOOGLE_API_KEY": google_key, "ANTHROPIC_API_KEY": anthropic_key}
        code, out, err = await _sabha(["roundtable", QUESTION], tmp_path, extra_env=env)
    assert code == 0, err + out
    data = json.loads(out)
    assert set(data) == {"transcript", "summary"}
    assert all(statement in data["transcript"] for statement in SAID)
    assert data["summary"] == ["Monitor Crunchbase for Series A raises (Owner: Builder)",
                               "Time outreach within two weeks of the raise (Owner: FULLSEND)",
                               "Lead with congratulations and one insight (Owner: Orchestrator)"]
    assert len(gemini.requests) == 9  # 3 rounds x 3 debaters, all on Gemini
    assert all(r.path.endswith("/models/gemini-2.5-flash:generateContent") for r in gemini.requests)
    assert {(r.body["generationConfig"]["temperature"], r.body["generationConfig"]["maxOutputTokens"])
            for r in gemini.requests} == {(0.8, 200)}
    # thinking off: 2.5 Flash would otherwise think first and could spend the 200 tokens before answering
    assert all(r.body["generationConfig"]["thinkingConfig"] == {"thinking_budget": 0} for r in gemini.requests)
    third = "\n".join(p.get("text", "") for c in gemini.requests[8].body["contents"] for p in c["parts"])
    assert all(statement in third for statement in SAID[:8])  # the whole debate so far, on Gemini too
    [summary] = claude.requests  # the summary alone, on Claude
    assert summary.body["model"] == "claude-sonnet-4-6"
    assert (summary.body["temperature"], summary.body["max_tokens"]) == (0.3, 300)
    assert all(statement in json.dumps(summary.body) for statement in SAID)

"""Google Gemini as a provider (issue 25, "Mixed models"): ``google:<model>`` (or ``gemini:<model>``)
through Google's official ``google-genai`` SDK, pointed at :class:`tests.support.fakes.gemini_api.FakeGemini`
by ``llm.providers.google.base_url``; every test goes through the real CLI (``sabha ask``, ``sabha cost``)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from board.agent.exchange.outcome import DEGRADED_REPLY
from tests.board.llm.test_llm_providers import soul_phrase
from tests.support.fakes.gemini_api import FakeGemini
from tests.support.llm import LookupTool, envelope, provider_board

REPO = Path(__file__).resolve().parents[3]
KEY = "gemini-test-key"


async def sabha(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """The real CLI as a subprocess (the event loop keeps serving the fake meanwhile)."""
    full = {k: v for k, v in os.environ.items()
            if not k.startswith("SABHA_") and k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY")}
    full.update(PYTHONPATH=str(REPO), XDG_DATA_HOME=str(cwd / "xdg"), **(env or {}))
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot.cli.main", *args, cwd=cwd, env=full,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def board(tmp_path: Path, fake: FakeGemini, llm: str) -> Path:
    """A board made by ``sabha init`` whose llm section is ``llm`` plus the fake's base URL."""
    code, _, err = await sabha(["init", str(tmp_path / "proj")], tmp_path)
    assert code == 0, err
    home = tmp_path / "proj"
    (home / "sabha.yaml").write_text(
        "workspace: ./workspace\ndata_dir: ./sessions\n"
        f"llm:\n{llm}  providers:\n    google:\n      base_url: {fake.base_url}\n      timeout_s: 20\n"
        "board:\n  roster: board\n", encoding="utf-8")
    return home


@pytest.fixture
async def fake() -> FakeGemini:
    async with FakeGemini(api_key=KEY) as server:
        yield server  # type: ignore[misc]


async def test_a_turn_on_gemini_is_answered_with_the_system_instruction_and_costed(
    tmp_path: Path, fake: FakeGemini
) -> None:
    home = await board(tmp_path, fake, "  model: google:gemini-2.5-flash\n")
    fake.script_text("Cut the burn first: runway before reach.")
    code, out, err = await sabha(["ask", "--role", "critic", "Should we hire two engineers now?"], home,
                                 {"GOOGLE_API_KEY": KEY})
    assert code == 0, err
    assert out.startswith("🦉 Critic: ") and "Cut the burn first: runway before reach." in out, out

    [request] = fake.requests
    assert request.path == "/v1beta/models/gemini-2.5-flash:generateContent" or request.path.endswith(
        "/models/gemini-2.5-flash:generateContent"), request.path
    assert request.headers["x-goog-api-key"] == KEY
    body = request.body
    system = "".join(p["text"] for p in body["systemInstruction"]["parts"])
    assert "Critic" in system and len(system) > 200, system[:300]
    assert body["contents"][-1]["role"] == "user"
    assert "Should we hire two engineers now?" in body["contents"][-1]["parts"][0]["text"]
    assert body["generationConfig"]["maxOutputTokens"] > 0

    code, out, err = await sabha(["cost", "--by", "model", "--since", "all"], home)
    assert code == 0, err
    line = next((row for row in out.splitlines() if row.startswith("google:gemini-2.5-flash")), None)
    assert line is not None, out
    assert "*" not in line and "add it under llm.prices" not in out, out  # priced, not flagged unpriced


async def test_gemini_alias_and_gemini_api_key_work_too(tmp_path: Path, fake: FakeGemini) -> None:
    home = await board(tmp_path, fake, "  model: gemini:gemini-2.5-pro\n")
    fake.script_text("Through the other name.")
    code, out, err = await sabha(["ask", "Which market first?"], home, {"GEMINI_API_KEY": KEY})
    assert code == 0, err
    assert "Through the other name." in out, out
    assert fake.requests[0].path.endswith("/models/gemini-2.5-pro:generateContent")


async def test_429_then_500_are_retried_then_the_fallback_answers(tmp_path: Path, fake: FakeGemini) -> None:
    home = await board(tmp_path, fake, "  model: google:gemini-2.5-flash\n  fallbacks: [google:gemini-2.0-flash]\n"
                                       "  retry:\n    retries: 1\n    backoff_s: 0.05\n")
    fake.script_error(429, "RESOURCE_EXHAUSTED", "Quota exceeded for this minute", headers={"retry-after": "0"})
    fake.script_error(500, "INTERNAL", "An internal error has occurred")
    fake.script_text("The fallback's answer.")
    code, out, err = await sabha(["ask", "--role", "finance", "What is our runway?"], home, {"GOOGLE_API_KEY": KEY})
    assert code == 0, err
    assert "The fallback's answer." in out, out
    models = [r.path.rsplit("/", 1)[1] for r in fake.requests]
    assert models == ["gemini-2.5-flash:generateContent", "gemini-2.5-flash:generateContent",
                      "gemini-2.0-flash:generateContent"], models


async def test_gemini_down_for_good_is_the_graceful_message(tmp_path: Path, fake: FakeGemini) -> None:
    home = await board(tmp_path, fake, "  model: google:gemini-2.5-flash\n  retry:\n    retries: 1\n"
                                       "    backoff_s: 0.05\n")
    for _ in range(2):
        fake.script_error(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")
    code, out, err = await sabha(["ask", "--role", "finance", "What is our runway?"], home, {"GOOGLE_API_KEY": KEY})
    assert len(fake.requests) == 2  # tried, retried once, then no fallback left
    assert "Traceback" not in err, err
    assert out == f"💰 Finance: {DEGRADED_REPLY}\n", out  # the board's own words, not the API's
    assert code == 1 and "503" in err, err  # the owner's log says what failed


async def test_without_a_key_the_advice_names_google_api_key(tmp_path: Path, fake: FakeGemini) -> None:
    home = await board(tmp_path, fake, "  model: google:gemini-2.5-flash\n")
    code, out, err = await sabha(["ask", "hi"], home)
    assert code == 2 and "needs an API key: export GOOGLE_API_KEY=" in err, (out, err)
    assert "Traceback" not in err
    assert fake.requests == []


async def test_tools_go_as_function_declarations_and_the_result_comes_back(tmp_path: Path, workspace: Path,
                                                                          fake: FakeGemini) -> None:
    fake.script_tool_call("lookup", {"q": "laptops"}, "call_gst")
    fake.script_text("GST on laptops is 18%, per the lookup.")
    provider = f'google: {{base_url: "{fake.base_url}", api_key: "{KEY}"}}'
    board = await provider_board(tmp_path, workspace, "google:gemini-2.5-flash", provider)
    lookup = LookupTool()
    board.parts.tools.register(lookup.tool())
    try:
        reply = await board.handle(envelope("@finance what GST do we pay on laptops?"))
        assert reply.text == "GST on laptops is 18%, per the lookup." and not reply.degraded
        first, second = fake.requests
        assert soul_phrase(workspace, "finance") in first.body["systemInstruction"]["parts"][0]["text"]
        [declarations] = [t["functionDeclarations"] for t in first.body["tools"]]
        declared = next(d for d in declarations if d["name"] == "lookup")
        assert declared["parameters_json_schema"]["required"] == ["q"]
        called, answered = second.body["contents"][-2:]
        assert called == {"role": "model", "parts": [
            {"functionCall": {"id": "call_gst", "name": "lookup", "args": {"q": "laptops"}}}]}
        [part] = answered["parts"]
        assert answered["role"] == "user" and part["functionResponse"]["id"] == "call_gst"
        assert part["functionResponse"]["name"] == "lookup"
        result = json.loads(part["functionResponse"]["response"]["result"])
        assert result == {"ok": True, "result": {"answer": "GST on laptops is 18%"}}
        assert lookup.seen[0][0] == {"q": "laptops"}
    finally:
        await board.close()


async def test_the_second_turn_reads_the_prefix_from_the_implicit_cache(tmp_path: Path, fake: FakeGemini) -> None:
    home = await board(tmp_path, fake, "  model: google:gemini-2.5-flash\n")
    for question in ("What is our runway?", "And if we hire two engineers?"):
        code, _, err = await sabha(["ask", "--role", "finance", question], home, {"GOOGLE_API_KEY": KEY})
        assert code == 0, err
    code, out, err = await sabha(["cost", "--by", "model", "--since", "all"], home)
    assert code == 0, err
    assert "Prompt cache:" in out and "read from it" in out, out
    first, second = (r.body for r in fake.requests)
    assert second["systemInstruction"] == first["systemInstruction"]  # the byte-stable prefix...
    assert second["contents"][0] == {"role": "user", "parts": [{"text": "What is our runway?"}]}  # ...then history
    assert "<turn_context>" in second["contents"][-1]["parts"][0]["text"]  # the per-turn context last


async def test_a_wrong_key_is_told_as_a_rejected_key_naming_the_variable(tmp_path: Path, fake: FakeGemini) -> None:
    home = await board(tmp_path, fake, "  model: google:gemini-2.5-flash\n")
    code, out, err = await sabha(["ask", "--role", "finance", "What is our runway?"], home,
                                 {"GOOGLE_API_KEY": "not-the-key"})
    assert code == 1 and len(fake.requests) == 1  # a setup problem: not retried
    assert "the API key was rejected" in err and "export a valid GOOGLE_API_KEY" in err, err
    assert "not-the-key" not in out + err  # the key itself is never shown
    assert out.startswith("💰 Finance: ") and "setup problem" in out, out  # the user is told it is the setup


async def test_an_answer_with_nothing_in_it_is_retried(tmp_path: Path, fake: FakeGemini) -> None:
    home = await board(tmp_path, fake, "  model: google:gemini-2.5-flash\n  retry:\n    retries: 1\n"
                                       "    backoff_s: 0.05\n")
    fake.script_text("", finish="SAFETY")
    fake.script_text("Second time lucky.")
    code, out, err = await sabha(["ask", "--role", "finance", "What is our runway?"], home, {"GOOGLE_API_KEY": KEY})
    assert code == 0, err
    assert "Second time lucky." in out and "finish reason SAFETY" in err, (out, err)


async def test_streamed_answers_are_joined_and_costed(tmp_path: Path, fake: FakeGemini) -> None:
    home = await board(tmp_path, fake, "  model: google:gemini-2.5-flash\n")
    config = home / "sabha.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("      timeout_s: 20\n",
                                                                 "      timeout_s: 20\n      stream: true\n"),
                      encoding="utf-8")
    fake.script_text("Runway is fourteen months at the current burn.")
    code, out, err = await sabha(["ask", "--role", "finance", "What is our runway?"], home, {"GOOGLE_API_KEY": KEY})
    assert code == 0, err
    assert out == "💰 Finance: Runway is fourteen months at the current burn.\n", out
    assert fake.requests[0].path.endswith("/models/gemini-2.5-flash:streamGenerateContent")
    code, out, err = await sabha(["cost", "--by", "model", "--since", "all"], home)
    assert code == 0 and "google:gemini-2.5-flash" in out, (out, err)


async def test_a_dropped_connection_is_retried_by_sabha_not_after_the_sdks_own_sleep(tmp_path: Path,
                                                                                   fake: FakeGemini) -> None:
    """Left alone, the SDK itself sleeps 1 to 10 s after a dropped connection and tries again,
    unseen by the ledger and the retry policy; Sabha's retry (backoff 0.05 s) does it instead."""
    home = await board(tmp_path, fake, "  model: google:gemini-2.5-flash\n  retry:\n    retries: 1\n"
                                       "    backoff_s: 0.05\n")
    fake.script_disconnect()
    fake.script_text("Answered after the drop.")
    code, out, err = await sabha(["ask", "--role", "finance", "What is our runway?"], home, {"GOOGLE_API_KEY": KEY})
    assert code == 0, err
    assert "Answered after the drop." in out, out
    assert "cannot reach" in err and "retrying in 0." in err, err  # Sabha's policy saw it and retried
    # two requests, the second Sabha's retry: had the SDK retried (after its own sleep of 1 s or more), its retry would
    # have taken the answer and Sabha would have seen no failure to retry
    assert len(fake.requests) == 2, fake.requests

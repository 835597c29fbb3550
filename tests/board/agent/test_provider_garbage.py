"""Provider garbage (issue 10 item 4): an answer that is not a usable completion is a transient error.

Seen: malformed JSON in a 200 answer was not retried, was told to the user as "a setup
problem" and logged with a traceback. Here the real ``openai`` and ``anthropic`` SDKs talk
to the wire-format fakes on 127.0.0.1, which serve: a 200 whose JSON is cut short, a 200
with no choices / an empty content list, and a proxy's HTML page with 200 or 502.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import aiosqlite
import pytest

from board.agent.runner import DEGRADED_REPLY, DEGRADED_SETUP_REPLY
from board.app import Board
from board.envelope import Reply
from tests.support.fakes.anthropic_api import FakeAnthropic
from tests.support.fakes.local_server import ScriptedServer
from tests.support.fakes.openai_api import FakeOpenAI
from tests.support.llm import configured_board, envelope

FAST = "  retry: {retries: 1, backoff_s: 0.01, backoff_max_s: 0.05, retry_after_max_s: 1}\n  timeout_s: 5\n"

Fake = FakeOpenAI | FakeAnthropic

GARBAGE: dict[str, Callable[[Fake], object]] = {
    "invalid-json-200": lambda fake: fake.script_not_json(200),
    "empty-200": lambda fake: fake.script_empty(),
    "html-200": lambda fake: fake.script_html(200),
    "html-502": lambda fake: fake.script_html(502),
}
PROVIDERS = {"openai": (FakeOpenAI, "gpt-4o-mini", "gpt-4o"),
             "anthropic": (FakeAnthropic, "claude-sonnet-4-6", "claude-haiku-4-5")}


async def _board(tmp_path: Path, workspace: Path, provider: str, fake: ScriptedServer[object],
                 fallbacks: str = "", options: str = "") -> Board:
    _, model, _ = PROVIDERS[provider]
    url = fake.base_url if isinstance(fake, FakeOpenAI) else fake.url  # type: ignore[attr-defined]
    return await configured_board(tmp_path, workspace, f"""
llm:
  model: {provider}:{model}
{fallbacks}
{FAST}
  providers:
    {provider}: {{base_url: "{url}", api_key: "k-test"{options}}}
""")


async def _ask(board: Board, caplog: pytest.LogCaptureFixture) -> tuple[Reply, list[aiosqlite.Row]]:
    """Say hello (logs captured from INFO), then close the board: the reply and the calls in the ledger."""
    try:
        with caplog.at_level(logging.INFO):
            reply = await board.handle(envelope("hello"))
        rows = await board.parts.db.fetchall("SELECT model, outcome FROM llm_calls ORDER BY id")
    finally:
        await board.close()
    return reply, rows


def _no_error_traceback(caplog: pytest.LogCaptureFixture) -> None:
    bad = [r for r in caplog.records if r.levelno >= logging.ERROR and r.exc_info]
    assert not bad, f"ERROR records with a traceback: {[r.getMessage() for r in bad]}"


params = pytest.mark.parametrize(
    ("provider", "garbage"), [(p, g) for p in PROVIDERS for g in GARBAGE]
)


@params
async def test_garbage_then_good_answer_is_retried(
    tmp_path: Path, workspace: Path, provider: str, garbage: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with PROVIDERS[provider][0]() as fake:
        GARBAGE[garbage](fake)
        fake.script_text("The good answer.")
        reply, _ = await _ask(await _board(tmp_path, workspace, provider, fake), caplog)
    assert reply.text == "The good answer." and not reply.degraded
    assert len(fake.requests) == 2
    _no_error_traceback(caplog)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "retrying" in r.getMessage()]
    assert len(warnings) == 1, warnings
    assert provider in warnings[0] and PROVIDERS[provider][1] in warnings[0]


@params
async def test_garbage_every_time_falls_back(
    tmp_path: Path, workspace: Path, provider: str, garbage: str, caplog: pytest.LogCaptureFixture
) -> None:
    _, _, fallback = PROVIDERS[provider]
    async with PROVIDERS[provider][0]() as fake:
        GARBAGE[garbage](fake)
        GARBAGE[garbage](fake)
        fake.script_text("The fallback answers.")
        board = await _board(tmp_path, workspace, provider, fake, f"  fallbacks: [{provider}:{fallback}]")
        reply, rows = await _ask(board, caplog)
    assert reply.text == "The fallback answers." and not reply.degraded
    assert fake.requests[-1].body["model"] == fallback
    assert [r["outcome"] for r in rows][-1] == "ok"
    assert all(r["outcome"] == "bad_response" or garbage == "html-502" for r in rows[:-1])
    _no_error_traceback(caplog)


@params
async def test_garbage_without_fallback_is_not_a_setup_problem(
    tmp_path: Path, workspace: Path, provider: str, garbage: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with PROVIDERS[provider][0]() as fake:
        for _ in range(2):
            GARBAGE[garbage](fake)
        reply, _ = await _ask(await _board(tmp_path, workspace, provider, fake), caplog)
    assert reply.degraded
    assert "setup problem" not in reply.text and "API key" not in reply.text
    assert len(fake.requests) == 2  # retried once
    _no_error_traceback(caplog)


@pytest.mark.parametrize("provider", list(PROVIDERS))
async def test_stream_garbage_is_retried(
    tmp_path: Path, workspace: Path, provider: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with PROVIDERS[provider][0]() as fake:
        fake.script_not_json(200)
        fake.script_text("Streamed fine.")
        reply, _ = await _ask(await _board(tmp_path, workspace, provider, fake, options=", stream: true"), caplog)
    assert reply.text == "Streamed fine." and not reply.degraded
    _no_error_traceback(caplog)


# (provider, status, error kind, message, called a setup problem?)
REFUSALS = [
    ("openai", 400, "context_length_exceeded", None, False),
    ("anthropic", 400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum", False),
    ("openai", 401, "invalid_api_key", None, True),
    ("anthropic", 401, "authentication_error", None, True),
]


@pytest.mark.parametrize(("provider", "status", "kind", "message", "setup"), REFUSALS)
async def test_only_a_setup_problem_is_called_one(
    tmp_path: Path, workspace: Path, provider: str, status: int, kind: str, message: str | None, setup: bool,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An error that is not retried is not by itself a setup problem: a 400 (here: the context
    is too long) gets the ordinary "trouble" wording; a rejected key gets the setup wording."""
    async with PROVIDERS[provider][0]() as fake:
        fake.script_error(status, kind, message)
        reply, rows = await _ask(await _board(tmp_path, workspace, provider, fake), caplog)
    assert reply.degraded
    assert len(fake.requests) == 1  # neither is retried
    assert reply.text == (DEGRADED_SETUP_REPLY if setup else DEGRADED_REPLY)
    assert [r["outcome"] for r in rows] == ["auth" if setup else "bad_request"]
    _no_error_traceback(caplog)


def test_only_key_and_model_errors_are_setup_problems() -> None:
    from board.llm.errors import bad_response_error, status_error

    assert status_error("openai", "m", 401, "bad key").setup_problem
    assert status_error("openai", "m", 403, "no access").setup_problem
    assert status_error("openai", "m", 404, "no such model").setup_problem
    assert not status_error("openai", "m", 502, "<html><title>502</title></html>").setup_problem
    assert not bad_response_error("openai", "m", "cut short").setup_problem
    assert "HTML page titled '502'" in str(status_error("openai", "m", 502, "<html><title>502</title></html>"))

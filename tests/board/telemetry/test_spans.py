"""The tracing facade while tracing is off (the default): nothing is made, nothing is imported, every call goes
through unchanged; and where an endpoint's traces go."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from board.telemetry.exporting import traces_url
from board.telemetry.spans import QuietSpan, is_on, span, trace_id, traced

REPO = Path(__file__).resolve().parents[3]


def test_off_every_span_is_the_one_shared_quiet_span() -> None:
    assert not is_on()
    first, second = span("meeting.seat", {"sabha.role": "critic"}), span("execute_tool x", root=True)
    assert first is second and isinstance(first, QuietSpan)  # nothing made per call
    with first as handle:
        handle.set("sabha.cost_usd", 0.5)
        handle.update({"gen_ai.usage.input_tokens": 3})
    assert trace_id() is None


async def test_off_a_traced_function_runs_as_it_is_and_its_attributes_are_not_read() -> None:
    read: list[str] = []

    def attributes(x: int) -> dict[str, int]:
        read.append("read")
        return {"x": x}

    @traced("double", attributes)
    async def double(x: int) -> int:
        return 2 * x

    assert await double(21) == 42 and double.__name__ == "double"
    assert read == []


def test_importing_and_using_the_facade_loads_no_opentelemetry() -> None:
    probe = ("import asyncio, sys\n"
             "from board.telemetry.spans import span, traced, trace_id\n"
             "from board.telemetry import logs, exporting, genai\n"
             "import board.agent.exchange.wrappers, board.room.meeting.run, bot.intake.intake, bot.ops.tracing\n"
             "with span('x', {'a': 1}): pass\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] == 'opentelemetry'))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=120,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_an_endpoint_gets_the_traces_path_unless_it_names_one() -> None:
    assert traces_url("http://127.0.0.1:4318") == "http://127.0.0.1:4318/v1/traces"
    assert traces_url("http://collector:4318/") == "http://collector:4318/v1/traces"
    assert traces_url("https://api.honeycomb.io/v1/traces") == "https://api.honeycomb.io/v1/traces"
    assert traces_url("https://otlp.example/ingest/traces") == "https://otlp.example/ingest/traces"

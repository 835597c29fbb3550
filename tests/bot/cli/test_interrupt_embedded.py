"""``main(argv)`` called by another program (issue 38 review): a Ctrl-C in the command returns 130 and leaves
the caller's process as it was: logging on, warnings shown, its thread and unraisable hooks its own. Only
``sabha`` itself (``main()``) silences the process on its way out. A real process calls ``main`` while
``ask`` waits on a model that holds the request, and gets SIGINT then."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path

from tests.support.cli import init_board
from tests.support.fakes.echo_model import EchoModel

CALLER = """
import json, logging, sys, threading, warnings
from bot.cli.main import main
filters, hook, unraisable = list(warnings.filters), threading.excepthook, sys.unraisablehook
print("started", flush=True)
code = main(["ask", "what is our runway?"])
print(json.dumps({"code": code, "logging_disabled": logging.root.manager.disable,
                  "warnings_kept": warnings.filters == filters, "hooks_kept": threading.excepthook is hook
                  and sys.unraisablehook is unraisable}), flush=True)
"""


async def test_an_interrupted_main_with_argv_leaves_the_callers_logging_and_warnings(tmp_path: Path) -> None:
    folder, env = await init_board(tmp_path)
    async with EchoModel() as model:
        model.hold()  # the question waits at the model until the caller is interrupted
        (folder / "sabha.yaml").write_text(
            "workspace: ./workspace\ndata_dir: ./sessions\nllm:\n  model: openai:echo\n  retry: {retries: 0}\n"
            f"  providers:\n    openai:\n      base_url: {model.base_url}\n      api_key: sk-test\n", encoding="utf-8")
        proc = await asyncio.create_subprocess_exec(sys.executable, "-c", CALLER, cwd=folder, env=env,
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        try:
            while model.in_flight == 0:  # until the question is at the model
                assert proc.returncode is None, "the caller ended before asking"
                await asyncio.sleep(0.05)
            proc.send_signal(signal.SIGINT)
            out, err = await asyncio.wait_for(proc.communicate(), 120)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
            model.release()
    assert proc.returncode == 0, err.decode()
    result = json.loads(out.decode().strip().splitlines()[-1])
    assert result == {"code": 130, "logging_disabled": 0, "warnings_kept": True, "hooks_kept": True}, result

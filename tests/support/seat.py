"""A board whose model is the meeting-sitting fake (:class:`tests.support.fakes.seat_model.SeatModel`), for the
tests of the owner at the table (issue 40): the web live page, ``sabha meeting`` in a terminal."""

from __future__ import annotations

from pathlib import Path

from board.workspace.paths import copy_default_workspace
from tests.support.fakes.seat_model import SeatModel

__all__ = ["write_seat_config"]


def write_seat_config(root: Path, model: SeatModel) -> Path:
    """A workspace and a ``sabha.yaml`` in ``root``: the HTTP server (the web pages) on a free port of 127.0.0.1,
    no channel, the model on the fake (priced, answers whole, no retries); the config's path."""
    if not (root / "workspace").exists():
        copy_default_workspace(root / "workspace")
    path = root / "sabha.yaml"
    path.write_text("\n".join([
        "workspace: ./workspace", "data_dir: ./sessions", "server:", "  host: 127.0.0.1", "  port: 0",
        "llm:", "  model: openai:seat", "  retry: {retries: 0}", "  providers:", "    openai:",
        "      api_key: test-key", f"      base_url: {model.base_url}", "      stream: false",
        "  prices:", "    openai:seat: {input: 1, output: 2}", ""]), encoding="utf-8")
    return path

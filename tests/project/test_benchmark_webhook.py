"""``benchmarks/webhook.py`` runs at its smallest size for each channel it measures (``--quick``: 50 signed
webhooks, one round, against a bare aiohttp handler), so the script cannot rot: every webhook acknowledged and
answered once, the CPU per acknowledgement printed. It prints figures; nothing here asserts on time."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("channel", ["slack", "whatsapp", "telegram"])
def test_the_webhook_benchmark_runs_at_its_smallest_size(channel: str) -> None:
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "webhook.py"), "--quick", "--channel", channel],
                          cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert re.search(r"CPU per acknowledgement \(turns held back; median over rounds\): "
                     r"bare [\d.]+ ms, sabha [\d.]+ ms", out), out
    assert "all 50 answered after" in out, out
    assert "sabha: answers sent twice: 0; lines logged at ERROR: 0" in out, out

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


def test_the_webhook_benchmark_can_have_the_service_answer_sends_late_on_whatsapp_only() -> None:
    """ack49: ``--send-latency`` makes the fake Graph API answer each request late (a reply's delivery takes a
    round trip, as Meta's servers do); the fakes of the other channels cannot, and say so."""
    script = str(REPO / "benchmarks" / "webhook.py")
    done = subprocess.run([sys.executable, script, "--quick", "--send-latency", "0.05"],
                          cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "the service answers each send after 0.05 s" in done.stdout, done.stdout
    assert "all 50 answered after" in done.stdout, done.stdout
    refused = subprocess.run([sys.executable, script, "--quick", "--channel", "telegram", "--send-latency", "0.05"],
                             cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    assert refused.returncode != 0 and "only the fake Graph API" in refused.stderr, refused.stderr[-2000:]

"""Helpers for the tests of Discord's buttons, slash commands, files and meetings: a ``sabha run`` on the fake
Discord with interactions (:class:`tests.support.fakes.discord_interactions.FakeDiscordMore`), with the echo model
or the offline board (meetings held short), and waiting for what the fake recorded."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tests.support.daemon import SabhaProcess
from tests.support.discord import env, write_config
from tests.support.fakes.discord_interactions import FakeDiscordMore
from tests.support.fakes.echo_model import EchoModel

__all__ = ["echo_running", "offline_config", "running"]


def offline_config(root: Path, fake: FakeDiscordMore, *, extra: Sequence[str] = ()) -> Path:
    """The Discord config of :func:`tests.support.discord.write_config` with the offline board instead of the
    echo model (meetings of two rounds: statements, a decision, minutes, no key needed)."""
    path = write_config(root, fake, "http://127.0.0.1:9/v1", extra=extra)
    lines = path.read_text(encoding="utf-8").splitlines()
    start = lines.index("llm:")
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith(" "))
    lines[start:end] = ["llm:", "  model: offline", "board:", "  meetings:", "    max_turns_per_agent: 2"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


async def running(config: Path, fake: FakeDiscordMore) -> SabhaProcess:
    """``sabha run`` on ``config``, connected to the fake's gateway with its slash commands registered."""
    sabha = SabhaProcess(config, env=env())
    await sabha.start()
    await fake.wait_for(lambda: fake.connected, "the gateway session")
    await sabha.wait_for_log(r"discord: connected to the gateway")
    await sabha.wait_for_log(r"discord: slash commands .* registered")
    return sabha


async def echo_running(root: Path, fake: FakeDiscordMore, model: EchoModel) -> SabhaProcess:
    """``sabha run`` with the echo model."""
    return await running(write_config(root, fake, model.base_url), fake)

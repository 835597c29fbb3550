"""``sabha discord setup`` prints an invite link a person can open (the application's id, the scopes, the
permission bits the board needs, computed by discord.py), and ``sabha doctor`` checks the bot against a fake
Discord REST API on 127.0.0.1: the token, the Message Content intent, the bot's permissions in the server,
naming what is missing, an unreachable API said plainly, the token never printed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import discord
import pytest

from tests.bot.cli.test_ops_cli import arun, free_port, plain_config
from tests.support.fakes.discord_interactions import APP_ID, BOT_TOKEN, GUILD_ID, FakeDiscordRest

#: What the board needs (bot/channels/discord/invite.py), written out here as a person would check it.
NEEDED = ("view_channel", "send_messages", "send_messages_in_threads", "create_public_threads",
          "read_message_history", "embed_links", "attach_files")


@pytest.fixture
async def rest() -> AsyncIterator[FakeDiscordRest]:
    server = await FakeDiscordRest().start()
    try:
        yield server
    finally:
        await server.stop()


def discord_config(root: Path, base_url: str, *, guild: bool = True) -> Path:
    lines = ["discord:", "  token: ${DISCORD_BOT_TOKEN}", f"  application_id: \"{APP_ID}\"",
             f"  api_base_url: {base_url}", "  allowed_user_ids: [\"1180000000000000777\"]"]
    if guild:
        lines.append(f"  guild_id: \"{GUILD_ID}\"")
    return plain_config(root, *lines)


async def test_setup_prints_the_invite_link_with_the_permission_bits(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISCORD_BOT_TOKEN", BOT_TOKEN)
    config = discord_config(tmp_path, "https://discord.com/api/v10")
    capsys.readouterr()
    code, out, _ = await arun(capsys, "discord", "setup", "--config", str(config))
    assert code == 0
    link = next(word for word in out.split() if word.startswith("https://discord.com/oauth2/authorize?"))
    query = parse_qs(urlsplit(link).query)
    assert query["client_id"] == [APP_ID]
    assert set(query["scope"][0].split()) == {"bot", "applications.commands"}
    assert query["guild_id"] == [GUILD_ID]
    granted = discord.Permissions(int(query["permissions"][0]))
    assert [name for name in NEEDED if not getattr(granted, name)] == []
    assert not granted.administrator and not granted.manage_guild  # no more than it needs
    assert "MESSAGE CONTENT INTENT" in out
    assert BOT_TOKEN not in out

    code, out, _ = await arun(capsys, "discord", "setup", "--application-id", "42", "--config", str(config))
    assert code == 0 and "client_id=42&" in out


async def test_setup_without_an_application_id_says_where_to_find_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = plain_config(tmp_path)
    capsys.readouterr()
    code, _, err = await arun(capsys, "discord", "setup", "--config", str(config))
    assert code != 0
    assert "General Information" in err and "--application-id" in err


async def test_doctor_passes_a_bot_with_the_intent_and_its_permissions(
        tmp_path: Path, rest: FakeDiscordRest, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISCORD_BOT_TOKEN", BOT_TOKEN)
    rest.extras.grant(discord.Permissions(**dict.fromkeys(NEEDED, True)).value)
    config = discord_config(tmp_path, rest.base_url)
    capsys.readouterr()
    code, out, _ = await arun(capsys, "doctor", "--config", str(config))
    assert "OK    channel discord:" in out and "sabha-board" in out
    assert "OK    discord message content intent: on" in out
    assert "OK    discord server permissions: in Test Company the bot has every permission it needs" in out
    assert code == 0, out
    assert BOT_TOKEN not in out


async def test_doctor_names_the_missing_intent_and_permissions(
        tmp_path: Path, rest: FakeDiscordRest, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISCORD_BOT_TOKEN", BOT_TOKEN)
    rest.extras.app_flags = 0
    rest.extras.grant(discord.Permissions(send_messages=True).value,
                      everyone=discord.Permissions(view_channel=True, read_message_history=True).value)
    config = discord_config(tmp_path, rest.base_url)
    capsys.readouterr()
    code, out, _ = await arun(capsys, "doctor", "--config", str(config))
    assert code == 1
    assert "FAIL  discord message content intent: the Message Content intent is off" in out
    assert "MESSAGE CONTENT INTENT" in out  # the fix says where to switch it on
    line = next(line for line in out.splitlines() if line.startswith("FAIL  discord server permissions"))
    for name in ("send_messages_in_threads", "create_public_threads", "embed_links", "attach_files"):
        assert name in line
    for granted in ("view_channel", "read_message_history", "send_messages ("):
        assert granted not in line
    assert "Server Settings > Roles" in out

    rest.extras.bot_in_guild = False
    code, out, _ = await arun(capsys, "doctor", "--config", str(config))
    assert f"FAIL  discord server permissions: the bot is not in server {GUILD_ID} (HTTP 404)" in out
    assert "sabha discord setup" in out


async def test_doctor_says_a_refused_token_and_an_unreachable_api_plainly(
        tmp_path: Path, rest: FakeDiscordRest, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISCORD_BOT_TOKEN", "MTE4.revoked.token")
    config = discord_config(tmp_path, rest.base_url)
    capsys.readouterr()
    code, out, _ = await arun(capsys, "doctor", "--config", str(config))
    assert code == 1
    assert "FAIL  channel discord: reachable, but the bot token was refused (HTTP 401)" in out
    assert "DISCORD_BOT_TOKEN" in out and "MTE4.revoked.token" not in out

    down = f"http://127.0.0.1:{free_port()}/api/v10"
    config = discord_config(tmp_path / "down", down)
    code, out, _ = await arun(capsys, "doctor", "--config", str(config))
    assert code == 1
    assert f"FAIL  channel discord: {down} is not reachable (connection refused or no route)" in out
    assert "discord.api_base_url" in out

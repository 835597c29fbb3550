"""``sabha slack setup`` prints a manifest Slack's app page accepts, naming every scope the channel uses;
``sabha doctor`` asks Slack's ``auth.test`` (the official client against a local fake) and names each
scope the token lacks with what it is for, says plainly when the API is unreachable, and never shows a
token."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from bot.channels.slack.manifest import BOT_EVENTS, BOT_SCOPES
from tests.bot.cli.test_ops_cli import arun, free_port, plain_config
from tests.support.fakes.slack_socket import ALL_SCOPES, APP_TOKEN, BOT_TOKEN, FakeSlack

#: What the channel's code calls, and the scope each call needs (Slack's method docs).
USED = {"chat.postMessage": "chat:write", "chat.update": "chat:write", "conversations history (message.channels)":
        "channels:history", "message.groups": "groups:history", "message.im": "im:history",
        "app_mention": "app_mentions:read", "users.info": "users:read", "files.info": "files:read",
        "/board": "commands"}


def slack_config(root: Path, *lines: str, base: str = "https://slack.com/api") -> Path:
    return plain_config(root, "slack:", "  bot_token: ${SLACK_BOT_TOKEN}", "  signing_secret: ${SLACK_SIGNING_SECRET}",
                        "  app_token: ${SLACK_APP_TOKEN}", f"  api_base_url: {base}", "  allowed_user_ids: [U0OWNER]",
                        *lines)


@pytest.fixture
def slack_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "8f742231b10e8888abcd99yyyzzz85a5")
    monkeypatch.setenv("SLACK_APP_TOKEN", APP_TOKEN)


async def test_setup_prints_a_manifest_with_every_scope(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        slack_env: None) -> None:
    config = slack_config(tmp_path)
    capsys.readouterr()
    code, out, _ = await arun(capsys, "slack", "setup", "--url", "https://board.example.com/", "--config", str(config))
    assert code == 0
    assert out.startswith("# paste this at https://api.slack.com/apps > Create New App > From a manifest")
    manifest = yaml.safe_load(out)
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == set(USED.values()) == set(BOT_SCOPES)
    settings = manifest["settings"]
    url = "https://board.example.com/slack/events"
    assert settings["event_subscriptions"] == {"bot_events": list(BOT_EVENTS), "request_url": url}
    assert settings["interactivity"] == {"is_enabled": True, "request_url": url}
    assert settings["socket_mode_enabled"] is False
    [command] = manifest["features"]["slash_commands"]
    assert command["command"] == "/board" and command["url"] == url
    assert manifest["display_information"]["name"] == "Sabha"
    assert BOT_TOKEN not in out and APP_TOKEN not in out


async def test_setup_in_socket_mode_needs_no_url(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 slack_env: None) -> None:
    config = slack_config(tmp_path, "  mode: socket", "  events_path: /hooks/slack")
    capsys.readouterr()
    code, out, err = await arun(capsys, "slack", "setup", "--json", "--config", str(config))
    assert code == 0
    manifest = json.loads(out)
    assert manifest["settings"]["socket_mode_enabled"] is True
    assert "request_url" not in manifest["settings"]["event_subscriptions"]
    assert "url" not in manifest["features"]["slash_commands"][0]
    assert "From a manifest" in err and "SLACK_APP_TOKEN" in err


async def test_setup_without_a_public_url_says_what_to_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            slack_env: None) -> None:
    config = slack_config(tmp_path, "  events_path: /hooks/slack")
    capsys.readouterr()
    code, out, err = await arun(capsys, "slack", "setup", "--config", str(config))
    assert code == 0
    assert yaml.safe_load(out)["settings"]["interactivity"]["request_url"] == "https://sabha.example.com/hooks/slack"
    assert "run again with --url" in err


async def test_doctor_names_a_missing_scope_and_never_shows_a_token(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], slack_env: None) -> None:
    async with FakeSlack(scopes=tuple(s for s in ALL_SCOPES if s != "files:read")) as fake:
        config = slack_config(tmp_path, base=fake.api_base_url)
        capsys.readouterr()
        code, out, err = await arun(capsys, "doctor", "--config", str(config))
        assert code == 1
        assert ("FAIL  channel slack: the bot token of @sabha in Fake Team lacks 1 scope(s): files:read (read files "
                "people share with the board") in out
        assert "fix: add the scope(s) under OAuth & Permissions" in out
        assert [c.method for c in fake.calls] == ["auth.test"]
        assert BOT_TOKEN not in out + err and APP_TOKEN not in out + err

        fake.scopes = ALL_SCOPES
        code, out, _ = await arun(capsys, "doctor", "--config", str(config))
        assert "OK    channel slack: " in out and "every scope granted" in out


async def test_doctor_checks_the_app_token_in_socket_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          slack_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    async with FakeSlack() as fake:
        config = slack_config(tmp_path, "  mode: socket", base=fake.api_base_url)
        capsys.readouterr()
        _, out, _ = await arun(capsys, "doctor", "--config", str(config))
        assert "OK    channel slack: " in out
        assert "OK    slack socket mode: the app-level token may open a Socket Mode connection" in out
        monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-1-revoked")
        _, out, err = await arun(capsys, "doctor", "--config", str(config))
        assert "FAIL  slack socket mode: Slack refused the app-level token (invalid_auth)" in out
        assert "xapp-1-revoked" not in out + err


async def test_doctor_says_an_unreachable_api_plainly(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      slack_env: None) -> None:
    base = f"http://127.0.0.1:{free_port()}/api"
    config = slack_config(tmp_path, base=base)
    capsys.readouterr()
    code, out, err = await arun(capsys, "doctor", "--config", str(config))
    assert code == 1
    assert f"FAIL  channel slack: cannot reach {base}" in out
    assert "fix: check the network, or slack.api_base_url" in out
    assert BOT_TOKEN not in out + err

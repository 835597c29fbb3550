"""``sabha doctor``'s Slack checks: the bot token (``auth.test``) and the scopes it was granted.

:func:`slack_probes` ask Slack's ``auth.test`` with the official client; the granted scopes come in
the ``x-oauth-scopes`` response header, and each scope of :data:`.manifest.BOT_SCOPES` the token
lacks is named with what the channel needs it for. In Socket Mode the app-level token is checked
too (``apps.connections.open`` answers only to an ``xapp-`` token with ``connections:write``; the
URL it returns is not used). Tokens are never shown: only Slack's error codes and the team's name.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import aiohttp

    from bot.channels.slack.config import SlackSection

__all__ = ["SlackFinding", "SlackFindingState", "SlackProbe", "slack_probes"]

NAME = "channel slack"
REINSTALL = ("add the scope(s) under OAuth & Permissions > Scopes > Bot Token Scopes (or paste the manifest of "
             "`sabha slack setup` again), then Reinstall to Workspace")


class SlackFindingState(StrEnum):
    """What one check found (the doctor's OK / FAIL)."""

    OK = "OK"
    FAIL = "FAIL"


@dataclass(frozen=True)
class SlackFinding:
    """One line of the doctor's report about Slack."""

    name: str
    state: SlackFindingState
    detail: str
    fix: str | None = None


#: One network check: given the doctor's HTTP session, what it found.
SlackProbe = Callable[["aiohttp.ClientSession"], Awaitable[SlackFinding]]


def slack_probes(section: SlackSection) -> list[SlackProbe]:
    """The bot token and its scopes, then (Socket Mode) the app-level token; [] when Slack is off."""
    if section.bot_token is None:
        return []
    from bot.channels.slack.config import SlackMode

    bot_token = section.bot_token.get_secret_value()

    async def bot(session: aiohttp.ClientSession) -> SlackFinding:
        return await _bot_token(section, bot_token, session)

    probes: list[SlackProbe] = [bot]
    if section.mode is SlackMode.SOCKET and section.app_token is not None:
        app_token = section.app_token.get_secret_value()

        async def app(session: aiohttp.ClientSession) -> SlackFinding:
            return await _app_token(section, app_token, session)

        probes.append(app)
    return probes


async def _bot_token(section: SlackSection, token: str, session: aiohttp.ClientSession) -> SlackFinding:
    import aiohttp
    from slack_sdk.errors import SlackApiError
    from slack_sdk.web.async_client import AsyncWebClient

    from bot.channels.slack.manifest import BOT_SCOPES, missing_scopes

    base = section.api_base_url
    client = AsyncWebClient(token=token, base_url=base, session=session, retry_handlers=[])
    try:
        resp = await client.auth_test()
    except SlackApiError as exc:
        error = exc.response.get("error") if exc.response is not None else None
        return SlackFinding(NAME, SlackFindingState.FAIL,
                            f"reachable, but Slack refused the bot token ({error or 'no error'})",
                            "copy the Bot User OAuth Token (xoxb-...) from OAuth & Permissions into SLACK_BOT_TOKEN")
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        return SlackFinding(NAME, SlackFindingState.FAIL, f"cannot reach {base}: {type(exc).__name__}",
                       "check the network, or slack.api_base_url")
    team = resp.get("team") or "?"
    user = resp.get("user") or "?"
    missing = missing_scopes(resp.headers.get("x-oauth-scopes"))
    if missing:
        named = "; ".join(f"{scope} ({BOT_SCOPES[scope]})" for scope in missing)
        return SlackFinding(NAME, SlackFindingState.FAIL, f"the bot token of @{user} in {team} lacks {len(missing)} "
                                                f"scope(s): {named}", REINSTALL)
    return SlackFinding(NAME, SlackFindingState.OK, f"{base} answers auth.test: @{user} in {team}, every scope granted")


async def _app_token(section: SlackSection, token: str, session: aiohttp.ClientSession) -> SlackFinding:
    import aiohttp
    from slack_sdk.errors import SlackApiError
    from slack_sdk.web.async_client import AsyncWebClient

    name = "slack socket mode"
    client = AsyncWebClient(token=token, base_url=section.api_base_url, session=session, retry_handlers=[])
    try:
        await client.apps_connections_open(app_token=token)
    except SlackApiError as exc:
        error = exc.response.get("error") if exc.response is not None else None
        return SlackFinding(name, SlackFindingState.FAIL, f"Slack refused the app-level token ({error or 'no error'})",
                       "make an App-Level Token with connections:write (Basic Information > App-Level Tokens) "
                       "and put it in SLACK_APP_TOKEN; turn on Socket Mode in the app's settings")
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        return SlackFinding(name, SlackFindingState.FAIL, f"cannot reach {section.api_base_url}: {type(exc).__name__}",
                       "check the network, or slack.api_base_url")
    return SlackFinding(name, SlackFindingState.OK, "the app-level token may open a Socket Mode connection")

"""Slack's Web API as the channel uses it: slack_sdk's :class:`~slack_sdk.web.async_client.AsyncWebClient`
on one aiohttp session, with Sabha's own retry rules (the client's retry handlers are off: a retry after a
request has left could post twice).

- A 429 (``Retry-After``: Slack's rate tiers; chat.update is about 50 a minute per workspace) posted nothing:
  the delivery is told (``progress.nothing_posted``), the request waits the seconds Slack asked for (counted
  in :attr:`SlackWeb.waited`) and goes again; the final text always lands.
- A request that could not connect posted nothing: tried again after 1, 2, 5, 10, 30, then 60 s (about five
  minutes in all), then it fails unsent.
- A request that left and lost its answer (a dropped connection, a timeout, a 5xx) *may have arrived*:
  ``SendFailed(MAY_HAVE_ARRIVED)``; the intake sends it once more, marked as possibly repeated.
- Slack's refusals (``channel_not_found``, ``not_in_channel``, ``is_archived``, ``invalid_auth`` ...) posted
  nothing: ``SendFailed(NOT_SENT)`` with what to do.

Each request that may post something calls ``progress.leaving()`` right before it is sent (after any wait):
"may have arrived" is never marked while a message waits. :attr:`SlackWeb.reach` (``auth.test``) is what
``/readyz`` says about Slack.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from bot.channels.reach import Reach, Unreachable
from bot.intake.delivery import DeliveryOutcome, SendFailed, SendProgress

__all__ = ["CONNECT_BACKOFF_S", "MAX_RETRY_AFTER_S", "SlackIdentity", "SlackWeb"]

log = logging.getLogger("sabha.slack")

#: Pauses before a request that could not connect goes again (about five minutes in all, then it fails unsent).
CONNECT_BACKOFF_S = (1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 60.0, 60.0, 60.0)
#: A Retry-After longer than this is waited in steps of this (a stop can end the wait).
MAX_RETRY_AFTER_S = 60.0
_HINTS = {
    "channel_not_found": "the channel does not exist or the app cannot see it (invite the app to it)",
    "not_in_channel": "the app is not in the channel: /invite @<app> there",
    "is_archived": "the channel is archived",
    "invalid_auth": "slack.bot_token is not valid (reinstall the app and copy its Bot User OAuth Token)",
    "not_authed": "slack.bot_token is missing",
    "account_inactive": "the app was uninstalled or its token revoked; reinstall it",
    "missing_scope": "the bot token lacks a scope (see docs/slack.md for the scopes)",
    "msg_too_long": "the message is too long",
    "message_not_found": "the message to edit is gone",
    "cant_update_message": "the message to edit is not the app's",
}


@dataclass(frozen=True)
class SlackIdentity:
    """Who the app is in its workspace (``auth.test``)."""

    user_id: str
    bot_id: str
    team_id: str
    team: str


class SlackWeb:
    """See the module docstring."""

    def __init__(self, token: str, api_base_url: str, *, timeout_s: int = 30,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.api_base_url = api_base_url
        self._token = token
        self._timeout_s = timeout_s
        self.sleep = sleep
        self.session: aiohttp.ClientSession | None = None
        self.client: AsyncWebClient | None = None
        self.reach = Reach("slack", f"Slack's Web API at {api_base_url}", self._probe)
        self.sent = 0
        self.edited = 0
        self.refused = 0
        self.rate_limited = 0
        self.waited = 0.0  # seconds waited for Retry-After, all requests together

    async def open(self) -> None:
        """The HTTP session and the client on it."""
        if self.session is None:
            self.session = aiohttp.ClientSession()
            sdk_log = logging.getLogger("sabha.slack.sdk")
            if sdk_log.level == logging.NOTSET:  # slack_sdk tests ``logger.level <= DEBUG``: NOTSET (0) would make
                sdk_log.setLevel(logging.INFO)  # it format every request and answer for a debug line nobody reads
            self.client = AsyncWebClient(token=self._token, base_url=self.api_base_url + "/", session=self.session,
                                         timeout=self._timeout_s, retry_handlers=[], logger=sdk_log)

    async def close(self) -> None:
        if self.session is not None:
            await self.session.close()
        self.session, self.client = None, None

    def _client(self) -> AsyncWebClient:
        if self.client is None:
            raise SendFailed("the Slack channel is not started", DeliveryOutcome.NOT_SENT)
        return self.client

    # -- reads -----------------------------------------------------------------------

    async def auth_test(self) -> SlackIdentity:
        """Who the token is (raises SlackApiError when Slack refuses it, aiohttp errors when unreachable)."""
        data = (await self._client().auth_test()).data
        assert isinstance(data, dict)
        return SlackIdentity(str(data.get("user_id", "")), str(data.get("bot_id", "")),
                             str(data.get("team_id", "")), str(data.get("team", "")))

    async def _probe(self) -> None:
        try:
            await self._client().auth_test()
        except SlackApiError:
            return  # Slack answered (a refusal is for the log of the start, not reachability)
        except (aiohttp.ClientError, TimeoutError, SendFailed) as exc:
            raise Unreachable(f"{type(exc).__name__}: {exc}") from exc

    async def user_name(self, user: str) -> str | None:
        """A user's display name (``users.info``); None when Slack does not say."""
        try:
            response = await self._client().users_info(user=user)
        except (SlackApiError, aiohttp.ClientError, TimeoutError) as exc:
            log.info("slack: users.info for %s failed (%s); the name is left out", user, _short(exc))
            return None
        found = response.get("user") or {}
        profile = found.get("profile") or {}
        for name in (profile.get("display_name"), profile.get("real_name"), found.get("real_name"), found.get("name")):
            if isinstance(name, str) and name.strip():
                return name.strip()
        return None

    # -- writes ----------------------------------------------------------------------

    async def post(self, channel: str, text: str, thread_ts: str | None, progress: SendProgress | None,
                   blocks: list[dict[str, Any]] | None = None) -> str:
        """``chat.postMessage``; the new message's ts."""
        args: dict[str, Any] = {"channel": channel, "text": text, "unfurl_links": False, "unfurl_media": False}
        if thread_ts:
            args["thread_ts"] = thread_ts
        if blocks:
            args["blocks"] = blocks
        response = await self._send("chat.postMessage", args, progress)
        self.sent += 1
        return str(response.get("ts", ""))

    async def update(self, channel: str, ts: str, text: str, progress: SendProgress | None,
                     blocks: list[dict[str, Any]] | None = None) -> None:
        """``chat.update`` of the app's message ``ts``."""
        args: dict[str, Any] = {"channel": channel, "ts": ts, "text": text}
        if blocks is not None:
            args["blocks"] = blocks
        await self._send("chat.update", args, progress)
        self.edited += 1

    async def _send(self, method: str, args: dict[str, Any], progress: SendProgress | None) -> AsyncSlackResponse:
        progress = progress or SendProgress()
        client = self._client()
        connect_failures = 0
        while True:
            await progress.leaving()
            try:
                response = await client.api_call(method, json=args)
            except SlackApiError as exc:
                self.reach.reached()
                status = exc.response.status_code
                if status == 429:
                    await progress.nothing_posted()
                    await self._wait_retry_after(method, exc)
                    continue
                if status >= 500:
                    raise SendFailed(f"{method}: Slack answered {status} after the request left",
                                     DeliveryOutcome.MAY_HAVE_ARRIVED) from exc
                await progress.nothing_posted()
                self.refused += 1
                error = str(exc.response.get("error", "error"))
                raise SendFailed(f"{method} refused: {error} ({_HINTS.get(error, 'see the Slack API docs')})",
                                 DeliveryOutcome.NOT_SENT) from exc
            except aiohttp.ClientConnectorError as exc:  # never reached Slack: safe to try again
                await progress.nothing_posted()
                self.reach.lost(_short(exc))
                if connect_failures >= len(CONNECT_BACKOFF_S):
                    raise SendFailed(f"{method}: cannot reach Slack's Web API ({_short(exc)})",
                                     DeliveryOutcome.NOT_SENT) from exc
                await self.sleep(CONNECT_BACKOFF_S[connect_failures])
                connect_failures += 1
                continue
            except (aiohttp.ClientError, TimeoutError) as exc:
                raise SendFailed(f"{method}: the request left and its answer was lost ({_short(exc)})",
                                 DeliveryOutcome.MAY_HAVE_ARRIVED) from exc
            self.reach.reached()
            progress.in_flight = False
            progress.posted += 1
            return response

    async def _wait_retry_after(self, method: str, exc: SlackApiError) -> None:
        self.rate_limited += 1
        try:
            seconds = float(exc.response.headers.get("Retry-After", "1"))
        except (TypeError, ValueError):
            seconds = 1.0
        seconds = max(0.0, seconds)
        log.info("slack: %s rate-limited by Slack; waiting %.0f s as it asks (Retry-After)", method, seconds)
        self.waited += seconds
        while seconds > 0:
            step = min(seconds, MAX_RETRY_AFTER_S)
            await self.sleep(step)
            seconds -= step


def _short(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]

"""``sabha slack ...``: the Slack channel from the command line.

``sabha slack setup`` prints the app manifest (:mod:`.manifest`) to paste at api.slack.com/apps >
Create New App > From a manifest: the bot scopes, the events, the ``/board`` slash command, the
request URLs (events, interactivity, the command: all ``<public url><slack.events_path>``) or, with
``slack.mode: socket``, Socket Mode instead of URLs.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from bot.cli.common import emit

if TYPE_CHECKING:  # `sabha --help` builds this parser: the rest is imported when the command runs
    from bot.channels.plugin import CliCommand, WithParts
    from bot.config import LoadedConfig

__all__ = ["add_cli"]

#: Shown in the manifest's request URLs when neither --url nor a public server.host is known.
PLACEHOLDER_URL = "https://sabha.example.com"
PASTE = "paste this at https://api.slack.com/apps > Create New App > From a manifest (pick the workspace, " \
        "choose {fmt}, paste, Create); then Install to Workspace and copy the tokens into the environment " \
        "(SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET{app})"


def add_cli(sub: Any, common: argparse.ArgumentParser) -> CliCommand:
    """Add ``sabha slack setup``; returns the handler."""
    p = sub.add_parser("slack", parents=[common], help="set up the Slack channel",
                       description="Set up the Slack channel: print the Slack app's manifest.")
    ssub = p.add_subparsers(dest="slack_command", metavar="ACTION", required=True)
    s = ssub.add_parser("setup", parents=[common], help="print the Slack app manifest to paste at api.slack.com/apps",
                        description="Print the Slack app's manifest (bot scopes, events, the /board command, "
                                    "interactivity; the request URLs, or Socket Mode when slack.mode is socket) "
                                    "to paste at api.slack.com/apps > Create New App > From a manifest.")
    s.add_argument("--url", metavar="URL",
                   help="the public https address Slack posts to (e.g. https://board.example.com); the request "
                        "URLs are URL + slack.events_path (default: server.host when it is public)")
    s.add_argument("--name", default="Sabha", help="the app's display name (default: Sabha)")
    s.add_argument("--json", action="store_true", help="print JSON instead of YAML")
    return cmd_slack


async def cmd_slack(loaded: LoadedConfig, args: argparse.Namespace, with_parts: WithParts) -> int:
    """slack setup."""
    import yaml

    from bot.channels.slack.config import SlackMode
    from bot.channels.slack.manifest import manifest

    slack = loaded.config.slack
    socket = slack.mode is SlackMode.SOCKET
    url = args.url or _server_url(loaded)
    if not socket and url is None:
        url = PLACEHOLDER_URL
        _note(f"no public URL known: the request URLs say {PLACEHOLDER_URL}; run again with --url https://<your "
              "public host> (Slack must reach it over HTTPS), or set slack.mode: socket to need none")
    if url is not None and not url.startswith(("https://", "http://")):
        _note(f"--url {url!r} has no scheme: Slack needs https://...")
    body = manifest(name=args.name, public_url=url, events_path=slack.events_path, socket_mode=socket)
    app = ", SLACK_APP_TOKEN (Basic Information > App-Level Tokens, scope connections:write)" if socket else ""
    if args.json:
        _note(PASTE.format(fmt="JSON", app=app))
        emit(json.dumps(body, indent=2))
        return 0
    emit("# " + PASTE.format(fmt="YAML", app=app))
    emit(yaml.safe_dump(body, sort_keys=False, allow_unicode=True).rstrip("\n"))
    return 0


def _server_url(loaded: LoadedConfig) -> str | None:
    """``http(s)://server.host:port`` when the server listens on a name others can reach, else None."""
    host = loaded.config.server.host
    if host in ("127.0.0.1", "0.0.0.0", "localhost", "::", "::1"):
        return None
    return f"http://{host}:{loaded.config.server.port}"


def _note(text: str) -> None:
    sys.stderr.write(f"sabha slack setup: {text}\n")

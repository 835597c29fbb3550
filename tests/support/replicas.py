"""Several real ``sabha run`` replicas on one PostgreSQL, behind a real nginx: the harness of the replica kill
test (tests/system/test_replicas_kill.py) and of benchmarks/replicas.py.

* :class:`Nginx` -- Debian's ``/usr/sbin/nginx`` in the foreground on a config of its own (temp folders, pid and
  log in a private folder; never the system's service): one ``upstream`` of the replicas' ports. Why its
  ``proxy_next_upstream`` is set as it is: see :func:`nginx_config`.
* :func:`replica_config` -- one replica's sabha.yaml: its own data dir and port, the SHARED workspace and
  ``state.url``, Telegram (webhook or polling) on the fake Bot API and WhatsApp on the fake Graph API, the echo
  model, a short ``replicas.lease_s``.
* :class:`Replicas` -- start N of them (:class:`tests.support.daemon.SabhaProcess` each), kill one, restart it.
* :class:`Burst` -- many conversations (half Telegram, half WhatsApp) writing through nginx, each message posted
  until acknowledged with 200 (Meta's and Telegram's redelivery of what was not acknowledged), one conversation's
  messages in order; then the tally: lost, answered twice, out of order.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import ClientError, ClientSession, ClientTimeout

from board.workspace.paths import copy_default_workspace
from bot.intake.inbox import UNFINISHED
from tests.support.ci import missing_part
from tests.support.daemon import WEBHOOK_SECRET, SabhaProcess
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.graph_api import FakeGraphAPI
from tests.support.fakes.telegram_api import FakeTelegramAPI
from tests.support.telegram import FAST, TOKEN
from tests.support.whatsapp import APP_SECRET, NUMBER_ID, VERIFY_TOKEN, sign, text_notification

__all__ = ["NGINX", "Burst", "Nginx", "Replicas", "between_turns", "free_port", "nginx_config", "replica_config"]

NGINX = Path("/usr/sbin/nginx")
_MARK = re.compile(r"ECHO [^\n]*?\b(Q\d{3,4})\b")
#: Telegram user ids and WhatsApp numbers of the burst's conversations.
TG_BASE = 700_000
WA_BASE = 15_551_000_000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def nginx_config(root: Path, listen: int, upstreams: list[int]) -> str:
    """An nginx.conf for a load balancer on ``listen`` in front of ``upstreams`` (127.0.0.1 ports).

    ``proxy_next_upstream error timeout http_502 http_503 non_idempotent``: a delivery that cannot reach a replica
    (refused: it is dead; reset: it died under the request) or that a replica refuses with 503 (stopping, or its
    database is away) is tried on the next replica, POSTs included (``non_idempotent``). That is safe for Sabha:
    a webhook delivery is idempotent there (the receipt dedupes on the channel's message id), so retrying it at
    once beats answering 502 and waiting for Meta's or Telegram's next retry. When every replica fails, the
    sender gets the last answer (502/503) and retries later: nothing acknowledged is lost either way.
    ``max_fails=1 fail_timeout=2s``: a dead replica is skipped for 2 s after one failure, not tried again per
    delivery. ``proxy_connect_timeout 1s``: a replica that does not accept is given up on quickly.
    """
    servers = "\n".join(f"        server 127.0.0.1:{p} max_fails=1 fail_timeout=2s;" for p in upstreams)
    user = "user root;\n" if os.geteuid() == 0 else ""
    temp = "\n".join(f"    {kind}_temp_path {root}/{kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi",
                                                                          "scgi"))
    return f"""{user}worker_processes 1;
daemon off;
pid {root}/nginx.pid;
error_log {root}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
{temp}
    upstream sabha {{
{servers}
        keepalive 32;
    }}
    server {{
        listen 127.0.0.1:{listen};
        client_max_body_size 5m;
        location / {{
            proxy_pass http://sabha;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_connect_timeout 1s;
            proxy_read_timeout 30s;
            proxy_next_upstream error timeout http_502 http_503 non_idempotent;
            proxy_next_upstream_tries 3;
            add_header X-Upstream $upstream_addr always;  # which replicas a delivery went to (a lost one's story)
        }}
    }}
}}
"""


@dataclass
class Nginx:
    """nginx in the foreground; :meth:`start` skips the test when Debian's nginx is not installed (fails it on CI)."""

    root: Path
    upstreams: list[int]
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Nginx:
        if not NGINX.exists():
            missing_part("Debian nginx is not installed (apt-get install nginx; .ci/run does)")
        self.root.mkdir(parents=True, exist_ok=True)
        conf = self.root / "nginx.conf"
        conf.write_text(nginx_config(self.root, self.port, self.upstreams), encoding="utf-8")
        self.proc = subprocess.Popen([str(NGINX), "-p", str(self.root), "-c", str(conf)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"nginx exited: {self.proc.stderr.read().decode() if self.proc.stderr else ''}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                return self
            time.sleep(0.05)
        raise AssertionError("nginx did not listen in 10 s")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def errors(self) -> str:
        path = self.root / "error.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)  # graceful: workers finish what they serve
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def tg_users(count: int) -> list[int]:
    return [TG_BASE + n for n in range(count)]


def wa_users(count: int) -> list[str]:
    return [str(WA_BASE + n) for n in range(count)]


def replica_config(root: Path, *, workspace: Path, state_url: str, port: int, telegram: FakeTelegramAPI,
                   graph: FakeGraphAPI | None, model: EchoModel, users: int, mode: str = "webhook",
                   lease_s: float = 2, name: str = "", extra: list[str] | None = None) -> Path:
    """One replica's sabha.yaml in ``root`` (its data dir ``root/sessions``); see the module docstring.
    ``users``: how many Telegram users and WhatsApp numbers are allowed (conversation ``c`` is ``TG_BASE + c`` /
    ``WA_BASE + c``)."""
    root.mkdir(parents=True, exist_ok=True)
    lines = [f"workspace: {workspace}", "data_dir: ./sessions", "server:", "  host: 127.0.0.1", f"  port: {port}",
             "llm:", "  model: openai:echo", "  retry: {retries: 0}", "  providers:", "    openai:",
             "      api_key: test-key", f"      base_url: {model.base_url}", "      stream: false",
             "memory:", "  auto_extract: false",
             "state:", f"  url: {state_url}", "  pool_size: 8",
             "replicas:", f"  lease_s: {lease_s}", f'  name: "{name}"',
             "telegram:", "  token: ${TELEGRAM_BOT_TOKEN}", f"  api_base_url: {telegram.base_url}",
             f"  allowed_user_ids: [{', '.join(str(u) for u in tg_users(users))}]",
             f"  rate_limit: {{{', '.join(f'{k}: {v}' for k, v in FAST.items())}}}", f"  mode: {mode}",
             "  stream: false"]
    if mode == "webhook":
        lines += [f"  webhook_secret: {WEBHOOK_SECRET}"]
    if graph is not None:
        numbers = ", ".join(f'"{u}"' for u in wa_users(users))
        lines += ["whatsapp:", f'  phone_number_id: "{NUMBER_ID}"', "  access_token: ${WHATSAPP_ACCESS_TOKEN}",
                  "  app_secret: ${WHATSAPP_APP_SECRET}", f"  verify_token: {VERIFY_TOKEN}",
                  f"  graph_base_url: {graph.base_url}", f"  allowed_numbers: [{numbers}]"]
    lines += extra or []
    path = root / "sabha.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


#: How long a replica may take to start while it is alive (several start at once on a small shared machine;
#: imports dominate): a bound only a hung replica hits, as for every ``sabha run`` (daemon_support).
START_TIMEOUT_S = 300.0


class ReplicaProcess(SabhaProcess):
    """A :class:`SabhaProcess` whose start failure names the replica (killed before the error, as any)."""

    async def start(self, timeout: float = START_TIMEOUT_S) -> ReplicaProcess:
        try:
            await SabhaProcess.start(self, timeout)
        except AssertionError as exc:
            raise AssertionError(f"replica {self.config.parent.name} did not start: {exc}") from exc
        return self


@dataclass
class Replicas:
    """N ``sabha run`` processes on one state, each with its own data dir and port, one shared workspace."""

    root: Path
    state_url: str
    telegram: FakeTelegramAPI
    graph: FakeGraphAPI | None
    model: EchoModel
    count: int = 3
    users: int = 50
    mode: str = "webhook"
    lease_s: float = 2
    extra: list[str] = field(default_factory=list)
    ports: list[int] = field(default_factory=list)
    procs: list[ReplicaProcess] = field(default_factory=list)

    def __post_init__(self) -> None:
        workspace = self.root / "workspace"
        if not workspace.exists():
            copy_default_workspace(workspace)
        env = {"TELEGRAM_BOT_TOKEN": TOKEN, "WHATSAPP_APP_SECRET": APP_SECRET,
               "WHATSAPP_ACCESS_TOKEN": self.graph.token if self.graph is not None else "unused"}
        for n in range(self.count):
            port = free_port()
            config = replica_config(self.root / f"r{n}", workspace=workspace, state_url=self.state_url, port=port,
                                    telegram=self.telegram, graph=self.graph, model=self.model, users=self.users,
                                    mode=self.mode, lease_s=self.lease_s, name=f"r{n}", extra=self.extra)
            self.ports.append(port)
            self.procs.append(ReplicaProcess(config, env=dict(env)))

    async def start(self) -> Replicas:
        """Start every replica (one after the other: they migrate once, under the advisory lock, either way)."""
        await asyncio.gather(*(p.start() for p in self.procs))
        return self

    def kill(self, n: int) -> None:
        """kill -9 replica ``n``."""
        proc = self.procs[n].proc
        assert proc is not None
        proc.send_signal(signal.SIGKILL)

    async def close(self) -> None:
        for proc in self.procs:
            if proc.proc is not None and proc.proc.returncode is None:
                proc.proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            with contextlib.suppress(Exception):
                await proc.wait(30)
            await proc.close()

    def save_logs(self, folder: Path) -> Path:
        """Every replica's whole log, one file each under ``folder`` (kept for a failed run)."""
        folder.mkdir(parents=True, exist_ok=True)
        for n, proc in enumerate(self.procs):
            (folder / f"r{n}.log").write_text("\n".join(proc.lines) + "\n", encoding="utf-8")
        return folder

    def by_port(self) -> dict[int, list[str]]:
        """Each replica's log lines, by its port (:meth:`Burst.story`)."""
        return {port: proc.lines for port, proc in zip(self.ports, self.procs, strict=True)}

    def logs(self) -> str:
        """Each replica's warnings and errors, then its last lines (what a failed assertion shows)."""
        def told(lines: list[str]) -> list[str]:
            return [line for line in lines if " WARNING " in line or " ERROR " in line or "Traceback" in line]

        return "\n\n".join(f"--- replica r{n}\n" + "\n".join([*told(p.lines)[-80:], "...", *p.lines[-30:]])
                             for n, p in enumerate(self.procs))


#: Stored messages not answered yet.
UNFINISHED_ROWS = frozenset(status.value for status in UNFINISHED)
#: How long :meth:`Burst.wait_finished` waits with nothing moving before it stops (a hung replica, not a slow one).
STALL_S = 60.0


@dataclass
class Burst:
    """``conversations`` conversations (the first half on Telegram, the rest on WhatsApp) of ``per`` messages each,
    posted through ``url`` (nginx). Conversation ``c``'s ``k``-th message carries the marker ``Q<k*conversations+c>``;
    each is posted until acknowledged with 200, the next only after it (so the receipt order is the send order)."""

    url: str
    conversations: int = 100
    per: int = 6
    telegram_share: float = 0.5
    pause_s: float = 0.0  # between one conversation's messages (a person typing)
    posted: int = 0  # deliveries tried (redeliveries included)
    acknowledged: int = 0
    refused: Counter[int] = field(default_factory=Counter)  # status (0: no answer) -> count
    again: list[tuple[bool, str, dict[str, Any]]] = field(default_factory=list)  # acknowledged, redelivered later
    #: marker -> each delivery's (status, the replicas nginx passed it to): what a lost one's story starts from
    tries: dict[str, list[tuple[int, str]]] = field(default_factory=lambda: defaultdict(list))
    _update_ids: int = 0

    @property
    def total(self) -> int:
        return self.conversations * self.per

    def marker(self, c: int, k: int) -> str:
        return f"Q{k * self.conversations + c:03d}"

    def on_telegram(self, c: int) -> bool:
        return c < int(self.conversations * self.telegram_share)

    def body(self, c: int, k: int, telegram: FakeTelegramAPI) -> tuple[bool, dict[str, Any]]:
        text = f"{self.marker(c, k)} what do you think?"
        if self.on_telegram(c):
            user = TG_BASE + c
            self._update_ids += 1
            return True, telegram.build_text_update(user, user, text, is_forum=False, chat_type="private",
                                                    update_id=10_000 + self._update_ids)
        return False, text_notification(str(WA_BASE + c), text)

    async def deliver(self, http: ClientSession, tg: bool, body: dict[str, Any], marker: str = "") -> int:
        """One POST through the load balancer; its status (0: no answer at all), kept in :attr:`tries`."""
        raw = json.dumps(body).encode()
        if tg:
            url, headers = f"{self.url}/telegram/webhook", {"X-Telegram-Bot-Api-Secret-Token": WEBHOOK_SECRET}
        else:
            url, headers = f"{self.url}/whatsapp/webhook", {"X-Hub-Signature-256": sign(raw)}
        self.posted += 1
        try:
            async with http.post(url, data=raw, headers={"Content-Type": "application/json", **headers}) as resp:
                await resp.read()
                self.tries[marker].append((resp.status, resp.headers.get("X-Upstream", "?")))
                return resp.status
        except (TimeoutError, ClientError, OSError):
            self.tries[marker].append((0, "-"))
            return 0

    def story(self, marker: str, logs: Mapping[int, list[str]]) -> str:
        """What became of ``marker``'s deliveries: each one's status and the replicas it went to, then the log lines
        of those replicas that name its sender (``logs``: port -> that replica's lines)."""
        c = int(marker[1:]) % self.conversations
        sender = str(TG_BASE + c) if self.on_telegram(c) else str(WA_BASE + c)
        tries = self.tries.get(marker, [])
        ports = {int(addr.rsplit(":", 1)[1]) for _, upstream in tries for addr in upstream.split(", ")
                 if addr.rsplit(":", 1)[-1].isdigit()}
        lines = [f"{marker} (from {sender}): deliveries {tries}"]
        for port in sorted(ports):
            named = [line for line in logs.get(port, []) if sender in line]
            lines += [f"  replica on port {port}, lines naming {sender}:", *(f"    {line}" for line in named[-12:])]
        return "\n".join(lines)

    async def until_acknowledged(self, http: ClientSession, tg: bool, body: dict[str, Any], marker: str = "") -> None:
        """Post ``body`` until a 200 (redelivery of what was not acknowledged, backing off to 1 s)."""
        wait = 0.05
        while True:
            status = await self.deliver(http, tg, body, marker)
            if status == 200:
                self.acknowledged += 1
                return
            self.refused[status] += 1
            await asyncio.sleep(wait)
            wait = min(wait * 2, 1.0)

    async def run(self, telegram: FakeTelegramAPI) -> None:
        """Every conversation at once, each in order."""
        async with ClientSession(timeout=ClientTimeout(total=40)) as http:

            async def conversation(c: int) -> None:
                await asyncio.sleep((c % 20) * 0.01)
                for k in range(self.per):
                    tg, body = self.body(c, k, telegram)
                    await self.until_acknowledged(http, tg, body, self.marker(c, k))
                    if k % 3 == 0:
                        self.again.append((tg, self.marker(c, k), body))
                    if self.pause_s:
                        await asyncio.sleep(self.pause_s)

            await asyncio.gather(*(conversation(c) for c in range(self.conversations)))
            # Meta (and Telegram) deliver at least once: some acknowledged deliveries come again.
            await asyncio.gather(*(self.deliver(http, tg, body, marker) for tg, marker, body in self.again))

    def answers(self, telegram: FakeTelegramAPI, graph: FakeGraphAPI | None) -> dict[int, list[str]]:
        """Each conversation's answered markers, in the order the answers went out."""
        out: dict[int, list[str]] = defaultdict(list)
        for sent in telegram.sent_messages:
            chat = int(sent.chat_id)
            # What the chat shows now: a "working on it" notice (sent when a turn outlasts board.slow_notice_s, as
            # under load) is edited into the answer, in the notice's place.
            shown = telegram.messages.get((sent.chat_id, sent.message_id), {}).get("text", sent.text)
            for mark in _MARK.findall(str(shown)):
                out[chat - TG_BASE].append(mark)
        for item in graph.sent if graph is not None else []:
            body = getattr(item, "body", None)
            user = getattr(item, "to", None) or getattr(item, "recipient", None)
            if body is None or user is None:
                continue
            for mark in _MARK.findall(body):
                out[int(user) - WA_BASE].append(mark)
        return out

    def answered_count(self, telegram: FakeTelegramAPI, graph: FakeGraphAPI | None) -> int:
        return len({m for marks in self.answers(telegram, graph).values() for m in marks})

    def tally(self, telegram: FakeTelegramAPI, graph: FakeGraphAPI | None) -> tuple[list[str], list[str], list[int]]:
        """(lost markers, markers answered more than once, conversations answered out of order)."""
        answers = self.answers(telegram, graph)
        seen = Counter(m for marks in answers.values() for m in marks)
        everything = [self.marker(c, k) for c in range(self.conversations) for k in range(self.per)]
        lost = [m for m in everything if seen[m] == 0]
        twice = [m for m in everything if seen[m] > 1]
        disordered = []
        for c in range(self.conversations):
            order = [m for m in dict.fromkeys(answers.get(c, []))]
            expected = [self.marker(c, k) for k in range(self.per) if self.marker(c, k) in order]
            if order != expected:
                disordered.append(c)
        return lost, twice, disordered

    async def wait_answered(self, telegram: FakeTelegramAPI, graph: FakeGraphAPI | None, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while self.answered_count(telegram, graph) < self.total and time.monotonic() < deadline:  # noqa: ASYNC110 - a fake's counter
            await asyncio.sleep(0.1)

    async def wait_finished(self, telegram: FakeTelegramAPI, graph: FakeGraphAPI | None, state_url: str,
                            stall_s: float = STALL_S) -> None:
        """Wait until the work is done, however long a loaded machine takes: every message answered, or none left
        unfinished in the state (what is missing then was lost or given up: the tally says which). Gives up only
        when nothing moved for ``stall_s`` (no answer went out and no stored message changed): hung replicas."""
        import asyncpg

        conn = await asyncpg.connect(state_url)
        try:
            seen: tuple[int, object] | None = None
            moved = time.monotonic()
            while True:
                answered = self.answered_count(telegram, graph)
                if answered >= self.total:
                    return
                rows = await conn.fetch("SELECT status, count(*) AS n, sum(attempts) AS a FROM inbound_messages "
                                        "GROUP BY status ORDER BY status")
                state = tuple((r["status"], r["n"], r["a"]) for r in rows)
                if not any(status in UNFINISHED_ROWS for status, _, _ in state):
                    return
                if (answered, state) != seen:
                    seen, moved = (answered, state), time.monotonic()
                elif time.monotonic() - moved > stall_s:
                    return
                await asyncio.sleep(0.2)
        finally:
            await conn.close()


def nginx_available() -> bool:
    return NGINX.exists() and shutil.which("runuser") is not None


async def between_turns(model: EchoModel, delivered: Callable[[], int], timeout: float = 30.0) -> None:
    """Hold the model and wait until every answer it gave has reached the fake service (``delivered()``: the
    answers the fakes received, no question counted twice), so no replica is between storing "sending" and
    the service's answer: the one window where a crash can only leave "may have arrived", never sent again
    (tests/system/test_durability.py kills at such moments too). Turns stay held at the model, mid-turn, however
    slow a loaded machine is; the caller kills, then releases the model."""
    model.hold()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    steady = 0
    while steady < 3:  # three looks in a row: nothing on its way between the model and the service
        answered_by_model = model.calls - model.in_flight
        steady = steady + 1 if answered_by_model == delivered() else 0
        if loop.time() > deadline:
            raise AssertionError(f"the answers never all reached the service: the model answered "
                                 f"{answered_by_model}, {delivered()} arrived")
        await asyncio.sleep(0.02)

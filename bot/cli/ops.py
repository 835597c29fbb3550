"""Operations commands: ``sabha status``, ``sabha inbox list|retry`` and the budget lines of ``sabha cost``.

``sabha status`` answers "is Sabha running for this data dir, and is it well?" from three sources:
``<data_dir>/daemon.json`` (written by the daemon once it listens, or with phase ``starting`` while it waits
for its state store: :mod:`bot.ops.startwait`) with a check that its pid is alive, the daemon's
``GET /healthz`` and ``/readyz`` (channels, readiness and its reasons, turns), and the state db (pending inbox, the
last messages that ended badly, WhatsApp replies that could not be delivered, today's cost against the
budgets). A daemon that waits for its state store is shown as running and starting, with what it waits for
(the problem, which try, when the next is); a state store that cannot be reached is said in one line instead
of the db's sections. Exit code: 0 running and ready, 1 running but not ready, 3 not running (systemd's
convention for "program is not running").

``sabha inbox list`` shows stored inbound messages; ``sabha inbox retry ID`` puts a
message that ended ``failed`` or ``abandoned`` back in the inbox to be answered. The
daemon takes stored messages up when it starts (not while it runs), so a retry is
answered at the next start; ``may_have_arrived`` rows are refused unless ``--force``,
since their reply may already be on the user's screen.
"""

from __future__ import annotations

import argparse
import contextlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from bot.cli.common import UserError, emit
from bot.cli.where import config_command
from bot.ops.runtime import pid_alive

if TYPE_CHECKING:  # the rest is imported where it is used: `sabha --help` builds this module's parsers
    import aiohttp

    from board.media.quota import MediaUsage
    from board.spending.ledger import Ledger
    from board.storage import Database
    from bot.config import LoadedConfig
    from bot.replicas.status import ReplicasReport

__all__ = ["DaemonInfo", "add_parsers", "budget_lines", "cmd_inbox", "cmd_status", "find_daemon"]

EXIT_NOT_READY = 1
EXIT_NOT_RUNNING = 3
HTTP_TIMEOUT_S = 3.0
UNFINISHED = ("received", "replied", "sending", "unconfirmed")  # unconfirmed: its confirmation awaited
PROBLEMS = ("failed", "may_have_arrived", "abandoned")
RETRYABLE = ("failed", "abandoned")
STATUSES = ("received", "replied", "sending", "answered", "failed", "may_have_arrived", "denied", "not_text",
            "abandoned")


# -- the daemon ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DaemonInfo:
    """What ``daemon.json`` says and whether it is true: ``alive`` (the pid runs), and what the
    daemon's endpoints answered (None when they could not be reached)."""

    pid: int
    host: str
    port: int
    started_at: str
    version: str
    alive: bool
    phase: str = "running"  # "starting": waiting for its state store (bot.ops.startwait)
    health: dict[str, Any] | None = None
    ready: dict[str, Any] | None = None
    http_error: str | None = None

    @property
    def url(self) -> str:
        """Where the daemon's HTTP server answers (a wildcard address is reached on loopback)."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "", "::") else self.host
        return f"http://{'[' + host + ']' if ':' in host else host}:{self.port}"


async def _get_json(session: aiohttp.ClientSession, url: str) -> dict[str, Any]:
    async with session.get(url) as resp:
        body = await resp.json(content_type=None)
        return body if isinstance(body, dict) else {"body": body, "status": resp.status}


async def find_daemon(loaded: LoadedConfig) -> DaemonInfo | None:
    """The daemon that ``<data_dir>/daemon.json`` names (None: no file or an unreadable one), its
    pid checked and, when alive, its ``/healthz`` and ``/readyz`` fetched."""
    path = loaded.data_dir / "daemon.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        pid, port = int(data["pid"]), int(data["port"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    info = DaemonInfo(pid=pid, host=str(data.get("host", "127.0.0.1")), port=port,
                      started_at=str(data.get("started_at", "?")), version=str(data.get("version", "?")),
                      alive=pid_alive(pid), phase=str(data.get("phase", "running")))
    if not info.alive:
        return info
    import aiohttp

    health = ready = None
    error = None
    timeout = aiohttp.ClientTimeout(total=HTTP_TIMEOUT_S)
    try:
        async with aiohttp.ClientSession(timeout=timeout) as session:
            health = await _get_json(session, info.url + "/healthz")
            try:
                ready = await _get_json(session, info.url + "/readyz")
            except aiohttp.ClientResponseError:
                ready = None
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return DaemonInfo(**{**info.__dict__, "health": health, "ready": ready, "http_error": error})


# -- budgets ------------------------------------------------------------------------------


async def budget_lines(ledger: Ledger, loaded: LoadedConfig, *, now: datetime | None = None) -> list[str]:
    """Today's spend (UTC day) against ``budget.daily_usd`` and ``budget.per_sender_daily_usd``, and what
    strangers spent against ``whatsapp.public_daily_usd`` (public mode)."""
    from board.spending.ledger import start_of_day
    from bot.channels.whatsapp.access import SCOPE as PUBLIC_SCOPE

    budget = loaded.config.budget
    since = start_of_day(now)
    spent = await ledger.spent(since=since)
    lines = [f"Today (UTC, since {since:%Y-%m-%d} 00:00): ${spent:.4f} spent on model calls"]
    if budget.daily_usd is None:
        lines.append("  budget.daily_usd: not set (no daily limit)")
    else:
        share = f"{spent / budget.daily_usd:.0%}" if budget.daily_usd else "-"
        state = "REACHED: messages get a fixed reply, no model calls" if spent >= budget.daily_usd else "ok"
        lines.append(f"  budget.daily_usd: ${spent:.4f} of ${budget.daily_usd:.2f} ({share}) {state}")
    top = await ledger.spent_by_sender(since=since, limit=5)
    limit = budget.per_sender_daily_usd
    if limit is None:
        lines.append("  budget.per_sender_daily_usd: not set (no per-sender limit)")
    else:
        lines.append(f"  budget.per_sender_daily_usd: ${limit:.2f} per sender (not the owner)")
    if top:
        lines.append("  spent by sender today:")
    for sender, usd in top:
        mark = ""
        if limit is not None:
            mark = f" of ${limit:.2f}" + ("  REACHED" if usd >= limit else "")
        lines.append(f"    {sender:<32} ${usd:.4f}{mark}")
    whatsapp = loaded.config.whatsapp
    if whatsapp.enabled and whatsapp.access.value == "public":
        public = await ledger.spent(since=since, scope=PUBLIC_SCOPE)
        meetings = "may" if whatsapp.public_meetings else "may not"
        lines.append(f"  whatsapp.public_daily_usd: ${public:.4f} of ${whatsapp.public_daily_usd:.2f} spent by "
                     f"strangers (public mode; they {meetings} convene meetings)")
    return lines


async def budget_json(ledger: Ledger, loaded: LoadedConfig) -> dict[str, Any]:
    """The same as :func:`budget_lines`, as data."""
    from board.spending.ledger import start_of_day
    from bot.channels.whatsapp.access import SCOPE as PUBLIC_SCOPE

    since = start_of_day()
    return {"since": since.isoformat(), "spent_usd": await ledger.spent(since=since),
            "daily_usd": loaded.config.budget.daily_usd,
            "per_sender_daily_usd": loaded.config.budget.per_sender_daily_usd,
            "senders": dict(await ledger.spent_by_sender(since=since, limit=20)),
            "public": {"whatsapp": {"spent_usd": await ledger.spent(since=since, scope=PUBLIC_SCOPE),
                                    "daily_usd": loaded.config.whatsapp.public_daily_usd,
                                    "meetings": loaded.config.whatsapp.public_meetings}}
            if loaded.config.whatsapp.enabled and loaded.config.whatsapp.access.value == "public" else {}}


# -- status -------------------------------------------------------------------------------


def _daemon_lines(info: DaemonInfo | None, loaded: LoadedConfig) -> tuple[list[str], int]:
    if info is None:
        return [f"Sabha is not running for data dir {loaded.data_dir} (no daemon.json there).",
                "  start it with `sabha run` (or `systemctl start sabha`)"], EXIT_NOT_RUNNING
    if not info.alive:
        return [f"Sabha is not running: {loaded.data_dir / 'daemon.json'} names pid {info.pid}, which does not "
                "run (it stopped without cleaning up, e.g. a crash or kill -9).",
                "  start it with `sabha run`; received messages are answered then"], EXIT_NOT_RUNNING
    lines = [f"Sabha {info.version} running: pid {info.pid}, since {info.started_at}, {info.url}"]
    if info.health is None:
        lines.append(f"  but its HTTP server does not answer ({info.http_error}); it may be starting, hung, or "
                     "another process took the pid; see its log (journalctl -u sabha)")
        return lines, EXIT_NOT_READY
    if info.health.get("status") == "starting":
        return lines + _waiting_lines(info.health), EXIT_NOT_READY
    code = 0
    ready = info.ready
    if ready is None:
        lines.append("  ready: unknown (this daemon has no /readyz)")
    elif ready.get("ready"):
        lines.append("  ready: yes")
    else:
        code = EXIT_NOT_READY
        lines.append("  ready: NO")
        lines.extend(f"    - {reason}" for reason in ready.get("reasons") or [])
    channels = info.health.get("channels") or {}
    if not channels:
        lines.append("  channels: none configured")
    for name, state in channels.items():
        if not isinstance(state, dict):
            continue
        extra = ", ".join(f"{k} {state[k]}" for k in ("bot", "mode", "number", "access") if state.get(k))
        line = f"  {name}: {state.get('state', '?')}" + (f" ({extra})" if extra else "")
        if state.get("problem"):
            line += f"; problem: {state['problem']}"
        lines.append(line)
    turns = info.health.get("turns") or {}
    if turns:
        lines.append(f"  turns: {turns.get('running', 0)} running, {turns.get('waiting', 0)} waiting "
                     f"(cap {turns.get('cap', '?')})")
    return lines, code


def _waiting_lines(health: dict[str, Any]) -> list[str]:
    """What a starting daemon waits for (its stand-in's ``/healthz``: :mod:`bot.ops.startwait`)."""
    waiting = health.get("waiting_for")
    if not isinstance(waiting, dict):  # an older stand-in: a name and the problem
        return [f"  starting: waiting for {waiting or 'its state store'}: {health.get('problem', '?')}",
                "  ready: NO"]
    lines = [f"  starting: waiting for {waiting.get('what', 'the state store')}: {waiting.get('problem', '?')}"]
    after = ""
    with contextlib.suppress(TypeError, ValueError):
        left = (datetime.fromisoformat(str(waiting.get("next_try_at"))) - datetime.now(UTC)).total_seconds()
        after = f" (in {max(0, round(left))} s)"
    lines.append(f"  try {waiting.get('try', '?')} failed; next try at {waiting.get('next_try_at') or '?'}{after}")
    lines.append("  ready: NO (it starts by itself once the state store answers; no restart needed)")
    return lines


def _served_elsewhere(lines: list[str], report: ReplicasReport) -> list[str]:
    """With replicas (PostgreSQL), "not running" is about this host's daemon: say whether other replicas serve the
    state meanwhile (the exit code stays "not running", systemd's view of this host's service)."""
    alive = report.replicas
    first = lines[0].replace("Sabha is not running", "Sabha is not running on this host", 1)
    if alive:
        names = ", ".join(f"{r.name} on {r.host}" for r in alive)
        said = f"  {len(alive)} other replica(s) serve this state: {names} (see Replicas below)"
    else:
        said = "  and no other replica serves this state: messages wait in the inbox until one starts"
    return [first, said, *lines[1:]]


def _row_id(db: Database) -> str:
    """The inbox row's number (``sabha inbox list`` shows it, ``retry ID`` takes it): SQLite's rowid, PostgreSQL's
    ``seq`` (the intake's stand-in for it: the order rows were stored in)."""
    from board.storage import Dialect

    return "seq" if db.dialect is Dialect.POSTGRES else "rowid"


async def _inbox_lines(db: Database) -> list[str]:
    rows = await db.fetchall(
        f"SELECT channel, status, COUNT(*) AS n FROM inbound_messages WHERE status IN "
        f"({', '.join('?' * len(UNFINISHED))}) GROUP BY channel, status ORDER BY channel, status", UNFINISHED)
    pending: dict[str, dict[str, int]] = {}
    for r in rows:
        pending.setdefault(str(r["channel"]), {})[str(r["status"])] = int(r["n"])
    if pending:
        parts = [f"{channel} {sum(c.values())} ({', '.join(f'{s} {n}' for s, n in c.items())})"
                 for channel, c in pending.items()]
        lines = ["Inbox: pending " + "; ".join(parts)]
    else:
        lines = ["Inbox: nothing pending"]
    bad = await db.fetchall(
        f"SELECT {_row_id(db)} AS id, channel, chat_id, message_id, status, detail, "
        f"COALESCE(answered_at, received_at) AS at "
        f"FROM inbound_messages WHERE status IN ({', '.join('?' * len(PROBLEMS))}) ORDER BY at DESC LIMIT 5",
        PROBLEMS)
    if bad:
        lines.append("Last problems (`sabha inbox list --status STATUS` for more, `sabha inbox retry ID` to retry):")
        for r in bad:
            lines.append(f"  #{r['id']} {r['at']} {r['channel']} chat {r['chat_id']} message {r['message_id']}: "
                         f"{r['status']}" + (f": {_short(str(r['detail']), 160)}" if r["detail"] else ""))
    return lines


async def _undeliverable_lines(db: Database) -> list[str]:
    try:
        rows = await db.fetchall(
            "SELECT user_key, reply_to, error_code, error_title, updated_at FROM whatsapp_outbound "
            "WHERE status = 'undeliverable' ORDER BY updated_at DESC LIMIT 5")
    except Exception:  # noqa: BLE001 - an older db without the WhatsApp tables
        return []
    if not rows:
        return []
    lines = ["WhatsApp replies not delivered (the 24-hour window had closed; `sabha whatsapp undeliverable`):"]
    lines += [f"  {r['updated_at']} to {r['user_key']} (answering {r['reply_to'] or '?'}): {r['error_code']} "
              f"{r['error_title'] or ''}".rstrip() for r in rows]
    return lines


async def _whatsapp_people_lines(db: Database, loaded: LoadedConfig) -> list[str]:
    """Listed WhatsApp numbers (or user ids) whose person changed them (the owner updates the list)."""
    from bot.channels.whatsapp.identity import changed_listed

    return await changed_listed(db, loaded.config.whatsapp.allowed_numbers)


async def _schedule_lines(db: Database) -> list[str]:
    """Scheduled work: pending, waiting (and why), failed (:mod:`board.schedule.report`)."""
    import os

    from board.clock import SYSTEM_CLOCK, ClockRefused, clock_from_env
    from board.schedule import WorkStore
    from board.schedule.report import status_lines

    try:
        clock = clock_from_env(os.environ)  # a test's clock file (SABHA_TEST_MODE) says which rows are late
    except ClockRefused:
        clock = SYSTEM_CLOCK
    return await status_lines(WorkStore(db), now=clock.now())


async def _decision_lines(db: Database) -> list[str]:
    """Board decisions: how many stand where, the one waiting for the owner (issue 27)."""
    from board.clock import SYSTEM_CLOCK
    from board.commands.decisions import status_lines
    from board.decisions.ratify import DecisionBook

    return await status_lines(DecisionBook(db, SYSTEM_CLOCK))


async def _replica_report(db: Database, loaded: LoadedConfig) -> ReplicasReport:
    """The replicas alive on this state, their leases and the backlog (:mod:`bot.replicas.status`)."""
    import time

    from bot.replicas.status import read_report

    return await read_report(db, now=time.time(), lease_s=loaded.config.replicas.lease_s)


async def _media_usage(db: Database, loaded: LoadedConfig) -> MediaUsage:
    """How full the media store is against its quotas (:func:`board.media.quota.media_usage`)."""
    from board.media.blobs import BlobStore
    from board.media.quota import media_usage
    from board.media.store import MediaStore

    return await media_usage(loaded.config.media.settings(), MediaStore(db), BlobStore(loaded.data_dir / "media"))


async def _state_lines(db: Database, loaded: LoadedConfig, args: argparse.Namespace, report: dict[str, Any],
                       lines: list[str], code: int) -> list[str]:
    """The sections read from the state store (replicas, inbox, schedule, media, budgets); fills ``report``."""
    from board.spending.ledger import Ledger
    from board.storage import Dialect
    from bot.replicas.status import report_lines

    replicas = await _replica_report(db, loaded)
    if code == EXIT_NOT_RUNNING and loaded.state_url().dialect is Dialect.POSTGRES:
        lines = _served_elsewhere(lines, replicas)
    lines += report_lines(replicas)
    report["replicas"] = replicas.as_json()
    lines += await _inbox_lines(db)
    lines += await _undeliverable_lines(db)
    lines += await _whatsapp_people_lines(db, loaded)
    lines += await _schedule_lines(db)
    lines += await _decision_lines(db)
    media = await _media_usage(db, loaded)
    lines += media.lines()
    report["media"] = media.as_json()
    lines += await budget_lines(Ledger(db), loaded)
    if args.json:
        report["budget"] = await budget_json(Ledger(db), loaded)
    return lines


async def cmd_status(loaded: LoadedConfig, args: argparse.Namespace) -> int:
    """``sabha status``; see the module docstring."""
    from board.app import DB_FILE
    from board.storage import Dialect, StorageError
    from bot.app import open_state_db

    info = await find_daemon(loaded)
    lines, code = _daemon_lines(info, loaded)
    db_path = loaded.data_dir / DB_FILE
    report: dict[str, Any] = {"data_dir": str(loaded.data_dir), "daemon": info.__dict__ if info else None}
    if info is not None and info.health is not None and info.health.get("status") == "starting":
        report["waiting_for"] = info.health.get("waiting_for")
    url = loaded.state_url()
    if url.dialect is Dialect.POSTGRES or (url.path or db_path).exists():
        try:
            db = await open_state_db(loaded)
        except StorageError as exc:
            if not exc.retryable:
                raise
            lines.append(f"State store: cannot be reached: {exc}; the inbox, schedule and costs are not shown")
            report["state_store"] = {"ok": False, "problem": str(exc)}
        else:
            async with db:
                lines = await _state_lines(db, loaded, args, report, lines, code)
    else:
        lines.append(f"No state database at {url.path or db_path} yet: nothing received, nothing spent.")
    if args.json:
        report["exit_code"] = code
        emit(json.dumps(report, indent=2, default=str))
    else:
        for line in lines:
            emit(line)
    return code


# -- inbox --------------------------------------------------------------------------------


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _preview(envelope_json: str | None) -> str:
    if not envelope_json:
        return ""
    try:
        return str(json.loads(envelope_json).get("text", ""))
    except ValueError:
        return ""


async def _inbox_rows(db: Database, args: argparse.Namespace) -> list[dict[str, Any]]:
    where, params = [], []
    if args.status:
        where.append("status = ?")
        params.append(args.status)
    if args.channel:
        where.append("channel = ?")
        params.append(args.channel)
    sql = (f"SELECT {_row_id(db)} AS id, channel, chat_id, message_id, status, attempts, received_at, answered_at, "
           "detail, envelope, reply IS NOT NULL AS has_reply FROM inbound_messages"
           + (f" WHERE {' AND '.join(where)}" if where else "") + f" ORDER BY {_row_id(db)} DESC LIMIT ?")
    rows = await db.fetchall(sql, (*params, args.limit))
    return [{"id": int(r["id"]), "channel": r["channel"], "chat_id": r["chat_id"], "message_id": r["message_id"],
             "status": r["status"], "attempts": int(r["attempts"] or 0), "received_at": r["received_at"],
             "finished_at": r["answered_at"], "detail": r["detail"], "text": _preview(r["envelope"]),
             "reply_stored": bool(r["has_reply"])} for r in rows]


async def _inbox_list(db: Database, args: argparse.Namespace) -> int:
    rows = await _inbox_rows(db, args)
    if args.json:
        emit(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if not rows:
        what = " ".join(f"{k} {v}" for k, v in (("status", args.status), ("channel", args.channel)) if v)
        emit(f"No stored messages{' with ' + what if what else ''}.")
        return 0
    head = f"{'ID':>6}  {'channel':<9} {'chat':<16} {'status':<16} {'tries':>5}  {'received (UTC)':<23}  text"
    emit(head)
    for r in rows:
        emit(f"{r['id']:>6}  {r['channel']:<9} {_short(str(r['chat_id']), 16):<16} {r['status']:<16} "
             f"{r['attempts']:>5}  {str(r['received_at'])[:23]:<23}  {_short(r['text'], 50)}")
        if r["detail"] and r["status"] in PROBLEMS:
            emit(f"{'':>8}why: {_short(str(r['detail']), 150)}")
    return 0


async def _inbox_retry(db: Database, args: argparse.Namespace, loaded: LoadedConfig) -> int:
    row = await db.fetchone(f"SELECT {_row_id(db)} AS id, channel, chat_id, message_id, status, reply IS NOT NULL AS "
                            f"has_reply, envelope IS NOT NULL AS has_envelope FROM inbound_messages "
                            f"WHERE {_row_id(db)} = ?", (args.id,))
    if row is None:
        raise UserError(f"no stored message with ID {args.id}; see `sabha inbox list`")
    status = str(row["status"])
    where = f"#{row['id']} ({row['channel']} chat {row['chat_id']}, message {row['message_id']})"
    if status in UNFINISHED:
        emit(f"{where} is already waiting to be answered ({status}); nothing to do.")
        return 0
    if status == "may_have_arrived" and not args.force:
        raise UserError(f"{where} may have arrived: its reply was being sent when delivery broke off, so the user "
                        "may already have it, and a retry could send it twice. If you know it did not arrive, "
                        f"run `sabha inbox retry {args.id} --force`")
    if status not in (*RETRYABLE, "may_have_arrived"):
        why = {"answered": "it was answered", "denied": "its sender is not allowed (change the allow-list instead)",
               "not_text": "it is not a text message (it got the fixed text-only reply)"}.get(status, status)
        raise UserError(f"{where} cannot be retried: {why}. Only failed or abandoned messages can be retried.")
    if not row["has_envelope"]:
        raise UserError(f"{where} has no stored copy of the message (received before Sabha kept copies), so it "
                        "cannot be answered again")
    resend = bool(row["has_reply"]) and status in ("failed", "may_have_arrived")
    new_status = "replied" if resend else "received"
    now = datetime.now(UTC).isoformat(timespec="milliseconds")
    await db.execute(
        "UPDATE inbound_messages SET status = ?, attempts = 0, received_at = ?, answered_at = NULL, detail = ? "
        f"WHERE {_row_id(db)} = ?", (new_status, now, f"re-queued by `sabha inbox retry` (was {status})", args.id))
    what = ("its stored reply will be delivered again (no new model call)" if resend
            else "the board will answer it again")
    emit(f"{where}: {status} -> {new_status}; {what}.")
    info = await find_daemon(loaded)
    if info is not None and info.alive:
        emit(f"A daemon runs for this data dir (pid {info.pid}); it takes stored messages up when it starts, so this "
             "one is answered after its next restart (`systemctl restart sabha`, or stop and start `sabha run`).")
    else:
        emit("It is answered at the next start (`sabha run`).")
    return 0


async def cmd_inbox(loaded: LoadedConfig, args: argparse.Namespace) -> int:
    """``sabha inbox list|retry``."""
    from bot.app import open_state_db
    from bot.cli.where import has_state

    if not has_state(loaded):
        db_path = loaded.state_url()
        if args.inbox_command == "retry":
            raise UserError(f"no state database at {db_path} yet: no message was ever stored; check data_dir")
        emit(f"No state database at {db_path} yet: no message was stored.")
        return 0
    async with await open_state_db(loaded) as db:
        if args.inbox_command == "retry":
            return await _inbox_retry(db, args, loaded)
        return await _inbox_list(db, args)


# -- parsers ------------------------------------------------------------------------------


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """``status`` and ``inbox`` (``doctor`` lives in :mod:`bot.cli.doctor`)."""
    p = sub.add_parser("status", parents=[common], help="is a daemon running here, is it ready, what is pending",
                       description="Whether a daemon runs for this config's data dir (daemon.json, its pid, "
                                   "/healthz and /readyz), its channels, pending inbox, recent problems and today's "
                                   "cost against the budgets. Exit 0: running and ready; 1: running, not ready; "
                                   "3: not running.")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=config_command(cmd_status, writes=False))

    p = sub.add_parser("inbox", parents=[common], help="list stored inbound messages, retry failed ones",
                       description="The durable inbox: every inbound message with how it ended.")
    isub = p.add_subparsers(dest="inbox_command", metavar="ACTION", required=True)
    lp = isub.add_parser("list", parents=[common], help="stored messages, newest first")
    lp.add_argument("--status", choices=STATUSES, help="only this status")
    lp.add_argument("--channel", help="only this channel (telegram, whatsapp)")
    lp.add_argument("--limit", type=int, default=20, metavar="N", help="at most N rows (default 20)")
    lp.add_argument("--json", action="store_true", help="machine-readable output")
    rp = isub.add_parser("retry", parents=[common], help="answer a failed or abandoned message again",
                         description="Put a failed or abandoned message back in the inbox (attempts reset): it is "
                                     "answered at the daemon's next start. A message whose reply may have arrived "
                                     "needs --force.")
    rp.add_argument("id", type=int, metavar="ID", help="the ID `sabha inbox list` shows")
    rp.add_argument("--force", action="store_true", help="retry even if its reply may have arrived (may duplicate)")
    p.set_defaults(handler=config_command(cmd_inbox, writes=False))

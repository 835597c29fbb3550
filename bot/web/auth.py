"""Who may see the owner's web pages: one-time login links, the signed session cookie, CSRF.

The flow: ``sabha web link`` (:func:`create_link`) writes a random token's SHA-256 into the state
db (``web_login_links``, migration 0900) and prints ``<base>/ui/login?token=...``; the link opens a
page with one "Sign in" button (a GET never uses the link up, so a chat app's link preview cannot
spend it); pressing it POSTs the token, which :meth:`LoginLinks.redeem` marks used in one
statement (single use, expiry checked, works while the daemon runs: the CLI and the daemon share
only the db). Redeemed, the browser gets :data:`COOKIE` — ``HttpOnly``, ``SameSite=Strict``,
``Path=/``, ``Secure`` when the page was reached over https — holding a session id and its
expiry, signed with HMAC-SHA256 (:class:`SessionSigner`). The signing key comes from
``$SABHA_WEB_SECRET`` when set, else from ``<data_dir>/web-secret.key``, generated once with
0600 permissions (:func:`signing_key`); replacing the key signs everyone out. On a state that replicas
share (PostgreSQL) the key is the state's, not a data dir's (:func:`shared_signing_key`), so a browser
signed in through one replica is signed in on all of them. Login attempts
that fail are limited per client address (:class:`LoginLimiter`, 429 past it; a valid link is
never refused).

Every POST carries a CSRF token (form field :data:`CSRF_FIELD` or header :data:`CSRF_HEADER`):
an HMAC of the session id, so it needs no storage and dies with the session (:func:`csrf_ok`).

The guard other route owners use (the web chat channel too), all typed:

- :func:`owner_required` wraps a handler: without a valid session a browser's GET is redirected
  (303) to ``/ui/login``, anything else gets 401; a POST without a valid CSRF token gets 403.
- :func:`session_of` (the :class:`WebSession` or None), :func:`csrf_token` (for a form),
  :func:`csrf_ok` (check one yourself).
The daemon puts the :class:`WebAuth` under :data:`WEB_AUTH` on its main application, so every
route on the server (sub-apps included, through ``request.config_dict``) can use the guard.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import json
import logging
import os
import secrets
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from pathlib import Path

from aiohttp import web

from board.clock import Clock
from board.storage import Database, Dialect
from bot.config.file import ConfigError
from bot.web.refusals import refusal

__all__ = [
    "COOKIE",
    "CSRF_FIELD",
    "CSRF_HEADER",
    "KEY_FILE",
    "LOGIN_PATH",
    "MAX_CLIENTS",
    "SECRET_ENV",
    "WEB_AUTH",
    "Handler",
    "LinkVerdict",
    "LoginLimiter",
    "LoginLinks",
    "SessionSigner",
    "WebAuth",
    "WebSession",
    "WebSessions",
    "check_request",
    "client_of",
    "create_link",
    "csrf_ok",
    "csrf_token",
    "live_session",
    "owner_required",
    "refuse",
    "same",
    "session_of",
    "set_cookie",
    "shared_signing_key",
    "signing_key",
]

log = logging.getLogger("sabha.web")

COOKIE = "sabha_session"
CSRF_FIELD = "csrf"
CSRF_HEADER = "X-CSRF-Token"
SECRET_ENV = "SABHA_WEB_SECRET"
KEY_FILE = "web-secret.key"
LOGIN_PATH = "/ui/login"
_MIN_SECRET = 32  # characters of $SABHA_WEB_SECRET
WINDOW_S = 60.0  # the login limiter's window
MAX_CLIENTS = 10_000  # addresses the login limiter remembers at most

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds")


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def signing_key(data_dir: Path, env: Mapping[str, str] | None = None) -> bytes:
    """The session-signing key: ``$SABHA_WEB_SECRET`` (at least 32 characters; shorter is a
    :class:`ConfigError`), else the key in ``<data_dir>/web-secret.key``, made once (0600) when missing."""
    env = os.environ if env is None else env
    secret = env.get(SECRET_ENV, "").strip()
    if secret:
        if len(secret) < _MIN_SECRET:
            raise ConfigError(f"${SECRET_ENV} is too short to sign sessions: use at least {_MIN_SECRET} random "
                             "characters (e.g. `openssl rand -hex 32`), or unset it to keep a key in the data dir")
        return secret.encode("utf-8")
    path = data_dir / KEY_FILE
    try:
        key = path.read_bytes().strip()
        if len(key) >= _MIN_SECRET:
            return key
    except FileNotFoundError:
        pass
    key = secrets.token_hex(32).encode("ascii")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(key + b"\n")
    os.chmod(path, 0o600)
    log.info("web: made the session key %s (0600); set $%s to use your own", path, SECRET_ENV)
    return key


async def shared_signing_key(db: Database, data_dir: Path, env: Mapping[str, str] | None = None) -> bytes:
    """The session-signing key of this daemon: :func:`signing_key` on SQLite (one process owns the data dir)
    or when ``$SABHA_WEB_SECRET`` is set; on PostgreSQL, where several replicas serve the same pages behind a
    load balancer, the one key in the state (table ``web_signing_key``), made by the first replica that needs it:
    from this data dir's ``web-secret.key`` when there is one (a board moved over keeps its browsers signed in),
    else at random."""
    env = os.environ if env is None else env
    if env.get(SECRET_ENV, "").strip() or db.dialect is not Dialect.POSTGRES:
        return signing_key(data_dir, env)
    try:
        kept = (data_dir / KEY_FILE).read_bytes().strip().decode("ascii")
    except (OSError, UnicodeDecodeError):
        kept = ""
    made = kept if len(kept) >= _MIN_SECRET else secrets.token_hex(32)
    row = await db.fetchone("INSERT INTO web_signing_key (id, key, made_at) VALUES (1, ?, ?) ON CONFLICT (id) DO "
                            "NOTHING RETURNING key", (made, datetime.now(UTC).isoformat(timespec="seconds")))
    if row is not None:
        log.info("web: made the session key (%s); the state database keeps it, so every replica signs alike; set "
                 "$%s to use your own", f"from {data_dir / KEY_FILE}" if made == kept else "at random", SECRET_ENV)
    else:
        row = await db.fetchone("SELECT key FROM web_signing_key WHERE id = 1")
    if row is None or len(str(row["key"])) < _MIN_SECRET:
        raise RuntimeError("the web session key in the state database (table web_signing_key) is missing or too "
                           f"short: delete its row so a replica makes a new one, or set ${SECRET_ENV}")
    return str(row["key"]).encode("ascii")


# -- one-time links ---------------------------------------------------------------------


class LinkVerdict(StrEnum):
    """What redeeming a login link found."""

    OK = "ok"
    UNKNOWN = "unknown"
    USED = "used"
    EXPIRED = "expired"


class LoginLinks:
    """The ``web_login_links`` table: make a link's token, redeem it once."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock

    async def create(self, ttl_s: float) -> str:
        """A new random token valid for ``ttl_s`` seconds (only its hash is stored)."""
        token = secrets.token_urlsafe(32)
        now = self.clock.now()
        await self.db.execute(
            "INSERT INTO web_login_links(token_hash, created_at, expires_at) VALUES (?, ?, ?)",
            (_hash(token), _iso(now), _iso(now + timedelta(seconds=ttl_s))))
        # links nobody used are of no interest a day after they expired
        await self.db.execute("DELETE FROM web_login_links WHERE expires_at < ?", (_iso(now - timedelta(days=1)),))
        return token

    async def redeem(self, token: str, *, by: str) -> LinkVerdict:
        """Use the link up (one statement: two tabs racing get one OK); what was wrong if not."""
        now = _iso(self.clock.now())
        digest = _hash(token)
        won = await self.db.fetchone(
            "UPDATE web_login_links SET used_at = ?, used_by = ? "
            "WHERE token_hash = ? AND used_at IS NULL AND expires_at > ? RETURNING token_hash",
            (now, by[:100], digest, now))
        if won is not None:
            return LinkVerdict.OK
        row = await self.db.fetchone("SELECT used_at FROM web_login_links WHERE token_hash = ?", (digest,))
        if row is None:
            return LinkVerdict.UNKNOWN
        return LinkVerdict.USED if row["used_at"] else LinkVerdict.EXPIRED


async def create_link(db: Database, clock: Clock, ttl_s: float, base_url: str) -> str:
    """A one-time login link under ``base_url`` (``http://host:port``), valid ``ttl_s`` seconds."""
    token = await LoginLinks(db, clock).create(ttl_s)
    return f"{base_url.rstrip('/')}{LOGIN_PATH}?token={token}"


# -- sessions ---------------------------------------------------------------------------


@dataclass(frozen=True)
class WebSession:
    """A signed-in browser: its session id, when the login ends, its CSRF token."""

    sid: str
    expires: datetime
    csrf: str


def same(given: str, expected: str) -> bool:
    """``given`` (from outside: any characters) equals ``expected``, in constant time. Compared as
    UTF-8 bytes: ``hmac.compare_digest`` refuses strings with non-ASCII characters (a TypeError)."""
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode("utf-8", "surrogatepass"))


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class SessionSigner:
    """Makes and checks the session cookie's value: ``<payload>.<hmac>`` (payload: sid, expiry)."""

    key: bytes
    ttl_s: float
    clock: Clock

    def _mac(self, purpose: str, text: str) -> str:
        return _b64(hmac.new(self.key, f"{purpose}|{text}".encode(), hashlib.sha256).digest())

    def issue(self) -> tuple[str, WebSession]:
        """A new session and the cookie value that carries it."""
        sid = secrets.token_urlsafe(16)
        expires = self.clock.now() + timedelta(seconds=self.ttl_s)
        payload = _b64(json.dumps({"sid": sid, "exp": int(expires.timestamp())}).encode())
        return f"{payload}.{self._mac('session', payload)}", self._session(sid, expires)

    def _session(self, sid: str, expires: datetime) -> WebSession:
        return WebSession(sid=sid, expires=expires, csrf=self._mac("csrf", sid))

    def verify(self, value: str | None) -> WebSession | None:
        """The session a cookie value carries; None when forged, malformed or expired."""
        if not value or value.count(".") != 1:
            return None
        payload, mac = value.split(".")
        if not same(mac, self._mac("session", payload)):
            return None
        try:
            data = json.loads(_unb64(payload))
            sid, expires = str(data["sid"]), datetime.fromtimestamp(int(data["exp"]), UTC)
        except (ValueError, KeyError, TypeError):
            return None
        if expires <= self.clock.now():
            return None
        return self._session(sid, expires)


class WebSessions:
    """The ``web_sessions`` table (migration 0901): a session is valid only while its row is there and
    not revoked, so Sign out ends it for good (a copied cookie too, after a restart too)."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock

    async def add(self, session: WebSession, *, by: str) -> None:
        """Record a new session (and forget those expired a day ago)."""
        now = self.clock.now()
        await self.db.execute(
            "INSERT INTO web_sessions(sid_hash, created_at, expires_at, created_by) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (sid_hash) DO NOTHING",
            (_hash(session.sid), _iso(now), _iso(session.expires), by[:100]))
        await self.db.execute("DELETE FROM web_sessions WHERE expires_at < ?", (_iso(now - timedelta(days=1)),))

    async def live(self, session: WebSession) -> bool:
        """Whether ``session`` was recorded and is not revoked."""
        row = await self.db.fetchone("SELECT revoked_at FROM web_sessions WHERE sid_hash = ?", (_hash(session.sid),))
        return row is not None and row["revoked_at"] is None

    async def revoke(self, session: WebSession) -> None:
        """End ``session`` (Sign out)."""
        await self.db.execute("UPDATE web_sessions SET revoked_at = ? WHERE sid_hash = ? AND revoked_at IS NULL",
                              (_iso(self.clock.now()), _hash(session.sid)))

    async def revoke_all(self) -> int:
        """End every session (``sabha web logout --all``); how many were live."""
        now = _iso(self.clock.now())
        rows = await self.db.fetchall("UPDATE web_sessions SET revoked_at = ? WHERE revoked_at IS NULL "
                                      "AND expires_at > ? RETURNING sid_hash", (now, now))
        return len(rows)


@dataclass
class LoginLimiter:
    """At most ``per_minute`` *failed* login attempts per client address in any 60 s; past it the
    address is answered 429 for its failures.

    Only failures count, and a valid link is never refused: behind a reverse proxy every visitor
    has the proxy's address, so counting every attempt would let anyone keep the owner out by
    posting junk. Guessing a link is hopeless anyway (256-bit tokens); the limit only slows a
    script down and keeps the log quiet. Memory is bounded: addresses are kept in the order of
    their last failure and dropped once it is a minute old (and past :data:`MAX_CLIENTS`, the
    longest idle first), each step O(1) amortised."""

    per_minute: int
    clock: Clock
    _seen: OrderedDict[str, deque[datetime]] = field(default_factory=OrderedDict)

    def _prune(self, now: datetime) -> None:
        while self._seen:
            oldest = next(iter(self._seen))
            window = self._seen[oldest]
            if window and (now - window[-1]).total_seconds() < WINDOW_S and len(self._seen) <= MAX_CLIENTS:
                return
            del self._seen[oldest]

    def _window(self, client: str, now: datetime) -> deque[datetime] | None:
        window = self._seen.get(client)
        if window is None:
            return None
        while window and (now - window[0]).total_seconds() >= WINDOW_S:
            window.popleft()
        return window

    def blocked(self, client: str) -> bool:
        """Whether ``client`` failed ``per_minute`` times or more in the last minute."""
        now = self.clock.now()
        self._prune(now)
        window = self._window(client, now)
        return window is not None and len(window) >= self.per_minute

    def failed(self, client: str) -> bool:
        """Count a failed attempt by ``client``; True when it is one too many (answer 429)."""
        now = self.clock.now()
        self._prune(now)
        window = self._window(client, now)
        if window is None:
            window = self._seen[client] = deque(maxlen=self.per_minute + 1)
        window.append(now)
        self._seen.move_to_end(client)
        return len(window) > self.per_minute

    def size(self) -> int:
        """How many addresses are remembered now."""
        self._prune(self.clock.now())
        return len(self._seen)


@dataclass(frozen=True)
class WebAuth:
    """Everything the guard needs, kept on the daemon's application under :data:`WEB_AUTH`."""

    signer: SessionSigner
    links: LoginLinks
    limiter: LoginLimiter
    sessions: WebSessions


WEB_AUTH = web.AppKey("sabha_web_auth", WebAuth)
_SESSION = web.RequestKey("sabha_web_session", WebSession)
_CHECKED = web.RequestKey("sabha_web_session_checked", bool)


def _auth(request: web.Request) -> WebAuth:
    auth = request.config_dict.get(WEB_AUTH)
    if auth is None:
        raise web.HTTPServiceUnavailable(text="the web pages are off (web.enabled: false)")
    return auth


def session_of(request: web.Request) -> WebSession | None:
    """The owner's session this request carries, else None: as :func:`live_session` found it when
    the request passed the guard; otherwise (the login page) a valid, unexpired, unforged cookie."""
    if _SESSION in request:
        return request[_SESSION]
    if _CHECKED in request:
        return None
    return _auth(request).signer.verify(request.cookies.get(COOKIE))


async def live_session(request: web.Request) -> WebSession | None:
    """The session of a valid, unexpired, unforged cookie that is not signed out (``web_sessions``);
    None otherwise. Looked up once per request."""
    if _CHECKED not in request:
        auth = _auth(request)
        found = auth.signer.verify(request.cookies.get(COOKIE))
        request[_CHECKED] = True
        if found is not None and await auth.sessions.live(found):
            request[_SESSION] = found
    return request.get(_SESSION)


async def still_signed_in(request: web.Request) -> bool:
    """Whether ``request``'s cookie is a live session *now* (not expired, not signed out since): for a stream
    that stays open after the request's own check (:func:`live_session` looks once per request)."""
    auth = _auth(request)
    found = auth.signer.verify(request.cookies.get(COOKIE))
    return found is not None and await auth.sessions.live(found)


def csrf_token(request: web.Request) -> str:
    """The CSRF token a form on this page must send back ("" without a session)."""
    found = session_of(request)
    return found.csrf if found else ""


def csrf_ok(request: web.Request, token: str | None) -> bool:
    """Whether ``token`` is this request's session's CSRF token (False without a session)."""
    found = session_of(request)
    return bool(found and token and same(token, found.csrf))


def _wants_page(request: web.Request) -> bool:
    return request.method == "GET" and "text/html" in request.headers.get("Accept", "")


def refuse(request: web.Request) -> web.StreamResponse:
    """What a request without a valid session gets: a browser's page view is sent to the login
    page, anything else is 401."""
    if _wants_page(request):
        raise web.HTTPSeeOther(LOGIN_PATH)
    raise refusal(web.HTTPUnauthorized, hint="Sign in first: run `sabha web link` and open the link it prints.",
                  headers={"WWW-Authenticate": 'Cookie realm="sabha"', "Cache-Control": "no-store"})


async def _form_csrf(request: web.Request) -> str | None:
    header = request.headers.get(CSRF_HEADER)
    if header:
        return header
    if request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
        form = await request.post()
        value = form.get(CSRF_FIELD)
        return value if isinstance(value, str) else None
    return None


async def check_request(request: web.Request) -> None:
    """Raise the refusal unless the request has a session and (for anything but GET/HEAD) a CSRF token."""
    if await live_session(request) is None:
        refuse(request)
    if request.method not in ("GET", "HEAD", "OPTIONS") and not csrf_ok(request, await _form_csrf(request)):
        raise web.HTTPForbidden(text="This form has expired or did not come from Sabha's page (no valid CSRF "
                                     "token); reload the page and try again.")


def owner_required(handler: Handler) -> Handler:
    """Wrap ``handler`` so that only the signed-in owner reaches it (see the module docstring)."""

    @functools.wraps(handler)
    async def guarded(request: web.Request) -> web.StreamResponse:
        await check_request(request)
        return await handler(request)

    return guarded


def client_of(request: web.Request) -> str:
    """The client's address as this server sees it (a proxy's, behind one)."""
    return request.remote or "unknown"


def set_cookie(response: web.StreamResponse, request: web.Request, value: str, ttl_s: float) -> None:
    """Put the session cookie on ``response``."""
    secure = request.secure or request.headers.get("X-Forwarded-Proto", "") == "https"
    response.set_cookie(COOKIE, value, max_age=int(ttl_s), path="/", httponly=True, samesite="Strict",
                        secure=secure)

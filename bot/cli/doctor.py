"""``sabha doctor``: check a setup before (or while) it runs; each check OK / FAIL with the fix.

Checks, in order: the config loads and validates; the secrets its models and channels
need are present (values never shown); the workspace loads (every role has a usable soul
file); the data dir is writable; the state store: with SQLite (the default), SQLite has what
Sabha uses (FTS5, JSON, WAL) and the state db passes ``PRAGMA quick_check``; with ``state.url`` on
PostgreSQL, the server answers with the configured user and password, and its schema is migrated
(every migration this Sabha knows applied; none it does not know) -- read only, nothing is changed
(``sabha run`` applies what is missing); recall: by words only, or by meaning too (``memory.embedding_model``
set, and sqlite-vec loadable or the PostgreSQL server's pgvector there); then, unless ``--offline``, each
provider and channel endpoint in use answers a short HTTP request (``HTTP_TIMEOUT_S``): the model
APIs' model list with the key, Telegram's ``getMe``, WhatsApp's phone number, Discord's bot, intent and
server permissions (:mod:`bot.channels.discord.checks`). An
endpoint that answers with 401/403 is reachable but refuses the credentials: that is a
FAIL too. Exit code 1 when any check fails, else 0.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.cli.common import emit

if TYPE_CHECKING:  # the rest is imported where it is used: `sabha --help` builds this module's parser
    import aiohttp

    from board.storage import StateURL
    from bot.config import LoadedConfig

__all__ = ["Check", "add_parsers", "check_recall", "check_voice", "cmd_doctor", "discord_checks", "run_checks"]

HTTP_TIMEOUT_S = 5.0
#: How long the PostgreSQL check waits for the server.
PG_TIMEOUT_S = 5.0
OPENAI_URL = "https://api.openai.com/v1"
ANTHROPIC_URL = "https://api.anthropic.com"


@dataclass(frozen=True)
class Check:
    """One line of the report: ``state`` is OK, FAIL or SKIP; ``fix`` says what to do on FAIL."""

    name: str
    state: str
    detail: str
    fix: str | None = None


def ok(name: str, detail: str) -> Check:
    return Check(name, "OK", detail)


def fail(name: str, detail: str, fix: str) -> Check:
    return Check(name, "FAIL", detail, fix)


# -- local checks -------------------------------------------------------------------------


def check_secrets(loaded: LoadedConfig) -> list[Check]:
    """Every provider in use has a key; the enabled channels have theirs (validated by the config);
    no secret is written into the config file itself."""
    from bot.app import missing_keys, provider_settings

    checks = [fail("secrets", problem.split(": export", 1)[0], "export " + problem.split(": export", 1)[1].strip())
              if ": export" in problem else fail("secrets", problem, "see config.example.yaml")
              for problem in missing_keys(loaded)]
    config = loaded.config
    present = []
    if config.telegram.enabled:
        present.append("telegram.token")
    if config.whatsapp.enabled:
        present.append("whatsapp access_token, app_secret, verify_token")
    for name in ("openai", "anthropic", "google"):
        if provider_settings(loaded, name).api_key:
            present.append(f"{name} API key")
    checks += [Check("secrets", "WARN", warning) for warning in loaded.warnings]
    if not [c for c in checks if c.state == "FAIL"]:
        checks.append(ok("secrets", "present: " + (", ".join(present) if present else "none needed (offline model, "
                                                   "no channels)")))
    return checks


def check_voice(loaded: LoadedConfig) -> list[Check]:
    """A warning when a channel that receives voice notes is on and nothing transcribes them: each would be
    answered "I can't listen to voice notes here" (a board may choose that, so it is no failure)."""
    config = loaded.config
    listening = [name for name, on in (("telegram", config.telegram.enabled), ("whatsapp", config.whatsapp.enabled))
                 if on]
    if not listening or config.media.transcribe_model:
        return []
    return [Check("voice notes", "WARN", f"{' and '.join(listening)} {'is' if len(listening) == 1 else 'are'} on "
                  "and no transcriber is set (media.transcribe_model): voice notes there are answered "
                  "\"I can't listen to voice notes here\"",
                  "set media.transcribe_model, e.g. openai:gpt-4o-mini-transcribe (its key in OPENAI_API_KEY)")]


def check_workspace(loaded: LoadedConfig) -> Check:
    """The workspace exists and every role's soul file loads."""
    from board.workspace.souls import SoulStore

    settings = loaded.board_settings()
    if not settings.workspace.is_dir():
        return fail("workspace", f"{settings.workspace} does not exist",
                    "run `sabha init` in the config's folder, or point workspace: at your workspace")
    try:
        store = SoulStore(settings.workspace, settings.roster)
        bad = [f"{s.role}: {s.error or 'no usable soul file'}" for s in store.status() if s.error or not s.version]
    except Exception as exc:  # noqa: BLE001 - any failure here is the finding
        return fail("workspace", f"{settings.workspace} does not load: {exc}", "see `sabha souls` for each role")
    if bad:
        return fail("workspace", "; ".join(bad), "fix those soul files (see `sabha souls`)")
    roles = len(store.roles())
    return ok("workspace", f"{settings.workspace}: {roles} roles of the {settings.roster.name} roster load")


def check_data_dir(data_dir: Path) -> Check:
    """The data dir can be written (or, before the first start, created: checked without creating it)."""
    if not data_dir.exists():
        parent = next((p for p in data_dir.parents if p.exists()), None)
        if parent is not None and parent.is_dir() and os.access(parent, os.W_OK | os.X_OK):
            return ok("data dir", f"{data_dir} does not exist yet; it can be created in {parent}")
        return fail("data dir", f"{data_dir} does not exist and cannot be created (no write access to "
                                f"{parent})", "create it and give the user running Sabha write access, or set "
                                              "data_dir: to a writable folder")
    import tempfile  # the imports of a check are the check's: `sabha --help` builds this parser too

    try:
        with tempfile.NamedTemporaryFile(dir=data_dir, prefix=".doctor-", delete=True) as fh:
            fh.write(b"ok")
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        return fail("data dir", f"{data_dir} is not writable ({exc.strerror or exc})",
                    f"create it and give the user running Sabha write access (e.g. chown -R sabha {data_dir}), or "
                    "set data_dir: to a writable folder")
    return ok("data dir", f"{data_dir} is writable")


def check_sqlite() -> Check:
    """The SQLite Python uses has FTS5 and JSON."""
    import sqlite3

    conn = sqlite3.connect(":memory:")
    try:
        options = {row[0] for row in conn.execute("PRAGMA compile_options")}
        missing = []
        try:
            conn.execute("CREATE VIRTUAL TABLE doctor_fts USING fts5(body)")
        except sqlite3.Error:
            missing.append("FTS5")
        try:
            conn.execute("SELECT json('{}')")
        except sqlite3.Error:
            missing.append("JSON")
    finally:
        conn.close()
    version = sqlite3.sqlite_version
    if missing:
        return fail("sqlite", f"SQLite {version} lacks {', '.join(missing)}",
                    "use a Python built against a full SQLite (python.org builds, Debian/Ubuntu python3, or "
                    "pysqlite3-binary)")
    fts = "ENABLE_FTS5" in options
    return ok("sqlite", f"SQLite {version}: FTS5 {'compiled in' if fts else 'available'}, JSON available")


def check_state_db(data_dir: Path, path: Path | None = None) -> Check:
    """The state db (``path``; by default ``sabha.db`` in ``data_dir``), if any, passes ``PRAGMA quick_check``,
    opened read-only."""
    import sqlite3

    from board.app import DB_FILE

    path = path or data_dir / DB_FILE
    if not path.exists():
        return ok("state db", f"{path} does not exist yet (created at the first start)")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            result = [row[0] for row in conn.execute("PRAGMA quick_check")]
            applied = conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return fail("state db", f"{path} cannot be read: {exc}",
                    "check its permissions; if it is damaged, stop Sabha and restore a backup")
    if result != ["ok"]:
        return fail("state db", f"{path}: {'; '.join(result[:3])}",
                    "stop Sabha, back the file up, and recover it (sqlite3 sabha.db .recover)")
    return ok("state db", f"{path}: quick_check ok, {applied} migrations applied")


async def check_postgres(url: StateURL) -> list[Check]:
    """With ``state.url`` on PostgreSQL: the server answers (one line), and the schema is migrated (one line).
    Read only: ``sabha run`` applies missing migrations, under a lock, at its start."""
    from board.storage import StorageError
    from board.storage.postgres import driver

    where = f"PostgreSQL {url}"
    try:
        asyncpg = driver()
    except StorageError as exc:
        return [fail("state server", f"{where}: {exc}", "pip install 'sabha[postgres]', then run doctor again")]
    try:
        conn = await asyncpg.connect(url.dsn(), password=url.password, timeout=PG_TIMEOUT_S)
    except asyncpg.InvalidPasswordError as exc:
        return [fail("state server", f"{where} refused the login ({exc})",
                     "export the password in SABHA_DB_PASSWORD (or PGPASSWORD), or fix the user in state.url")]
    except asyncpg.InvalidCatalogNameError:
        return [fail("state server", f"{where}: database {url.database!r} does not exist",
                     f"create it (createdb -O {url.user or '<user>'} {url.database}) or fix state.url")]
    except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
        return [fail("state server", f"{where} is not reachable ({type(exc).__name__}: {exc})",
                     "start the server, or fix the host and port in state.url (and its pg_hba.conf)")]
    try:
        version = str(await conn.fetchval("SHOW server_version"))
        table = await conn.fetchval("SELECT to_regclass('schema_migrations')")
        applied = {str(r["name"]) for r in await conn.fetch("SELECT name FROM schema_migrations")} \
            if table is not None else set()
    except (asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
        return [fail("state server", f"{where} answers but cannot be read ({exc})",
                     "grant the user in state.url the rights on its database (it owns Sabha's tables)")]
    finally:
        await conn.close()
    return [ok("state server", f"{where} answers (server {version})"), _migrated(where, applied)]


def _migrated(where: str, applied: set[str]) -> Check:
    from board.app import BOARD_MIGRATIONS
    from bot.app import all_migrations

    known = {m.name for m in (*BOARD_MIGRATIONS, *all_migrations())}
    unknown, missing = sorted(applied - known), sorted(known - applied)
    if unknown:
        return fail("state schema", f"{where} has migrations this Sabha does not know ({', '.join(unknown[:5])})",
                    "upgrade Sabha to the version the other replicas run, or point state.url at another database")
    if not applied:
        return ok("state schema", f"{where} is empty: the first `sabha run` creates Sabha's tables "
                                  f"({len(known)} migrations)")
    if missing:
        return Check("state schema", "WARN", f"{where}: {len(missing)} of {len(known)} migrations not applied yet "
                                             f"({', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}); "
                                             "the next `sabha run` applies them")
    return ok("state schema", f"{where}: migrated ({len(applied)} migrations applied)")


async def check_state(loaded: LoadedConfig) -> list[Check]:
    """The state store ``state.url`` names: the SQLite checks, or the PostgreSQL ones."""
    from board.storage import Dialect

    try:
        url = loaded.state_url()
    except ValueError as exc:
        return [fail("state", str(exc), "fix state.url (sqlite:///path or postgresql://user@host:port/db)")]
    if url.dialect is Dialect.POSTGRES:
        return await check_postgres(url)
    return [check_sqlite(), check_state_db(url.path.parent if url.path is not None else loaded.data_dir,
                                           url.path)]


async def check_recall(loaded: LoadedConfig) -> Check:
    """Recall by meaning (``memory.embedding_model``): on, or why recall stays lexical and what to do."""
    from board.storage import Dialect

    embedding = loaded.config.memory.embedding_settings()
    if embedding is None:
        return ok("recall", "by words only (set memory.embedding_model to recall by meaning too)")
    try:
        url = loaded.state_url()
    except ValueError:
        return Check("recall", "SKIP", "state.url is wrong (see above)")
    postgres = url.dialect is Dialect.POSTGRES
    problem = embedding.problem() or (await _pgvector(url) if postgres else _sqlite_vec()[1])
    if problem is not None:
        fix = ("install pgvector on the PostgreSQL server and run CREATE EXTENSION vector in Sabha's database, or "
               "keep the state in SQLite" if postgres else "pip install sqlite-vec in Sabha's environment")
        return Check("recall", "WARN", f"by words only, although memory.embedding_model is {embedding.model}: "
                                       f"{problem}", fix)
    if not embedding.api_key and embedding.base_url is None:
        variable = "GEMINI_API_KEY" if embedding.provider == "gemini" else "OPENAI_API_KEY"
        return Check("recall", "WARN", f"{embedding.model} has no API key: passages are not embedded",
                     f"export {variable} or set memory.embedding_api_key: ${{{variable}}}")
    where = embedding.base_url or "its provider's endpoint"
    kept = "pgvector in the state database" if postgres else f"sqlite-vec {_sqlite_vec()[0]}"
    return ok("recall", f"by meaning and by words: {embedding.model} at {where}, vectors kept with {kept}")


def _sqlite_vec() -> tuple[str, str | None]:
    """sqlite-vec's version, or why it cannot be loaded."""
    from board.recall.vector_store import VectorsUnavailable, load_sqlite_vec

    try:
        return load_sqlite_vec(), None
    except VectorsUnavailable as exc:
        return "", str(exc)


async def _pgvector(url: StateURL) -> str | None:
    """Why the PostgreSQL state database cannot search vectors (None: pgvector is there, or can be created)."""
    from board.recall.vector_store import PGVECTOR_MISSING
    from board.storage.postgres import driver

    try:
        asyncpg = driver()
        conn = await asyncpg.connect(url.dsn(), password=url.password, timeout=PG_TIMEOUT_S)
    except Exception as exc:  # noqa: BLE001 - the state server's own check above says what is wrong
        return f"the state server could not be asked whether it has pgvector ({type(exc).__name__})"
    try:
        if await conn.fetchval("SELECT 1 FROM pg_extension WHERE extname = 'vector'"):
            return None
        if await conn.fetchval("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"):
            return None  # Sabha creates it at its first search (or says why it could not)
        return PGVECTOR_MISSING
    finally:
        await conn.close()


# -- network checks -----------------------------------------------------------------------


Probe = Callable[["aiohttp.ClientSession"], Awaitable[Check]]


async def check_mcp(loaded: LoadedConfig, *, offline: bool) -> list[Check]:
    """Each MCP server of ``mcp.servers``: started as the daemon would (one reached over HTTP: not with --offline),
    OK with its tools, or FAIL with why; stopped again."""
    from bot.cli.tools import servers_for

    specs = loaded.config.mcp.settings().servers
    if not specs:
        return []
    manager, roles = servers_for(loaded)
    checks = [Check(f"mcp {s.name}", "SKIP", "enabled: false" if not s.enabled else "over HTTP (--offline)")
              for s in specs if not s.enabled or (offline and s.url)]
    skipped = {c.name for c in checks}
    manager.start(s.name for s in specs if f"mcp {s.name}" not in skipped)
    try:
        await manager.settled()
        for status in manager.states():
            name = f"mcp {status.name}"
            if name in skipped:
                continue
            given = ", ".join(manager.roles_of(status.name, roles)) or "no role yet"
            if status.state.usable:
                reads = sum(1 for _, r in status.tools if r)
                checks.append(ok(name, f"ready: {len(status.tools)} tool(s), {reads} only reading; given to {given}"))
            else:
                checks.append(fail(name, f"{status.state.value}: {status.last_error or 'no answer'}",
                                   f"check mcp.servers.{status.name} (command or url); `sabha tools test "
                                   f"{status.name}` shows what happens"))
    finally:
        await manager.close()
    return checks


def _refused(name: str, status: int, what: str, fix: str) -> Check:
    return fail(name, f"reachable, but {what} was refused (HTTP {status})", fix)


def _unreachable(name: str, where: str, exc: BaseException, fix: str) -> Check:
    import aiohttp

    reason = type(exc).__name__ if not isinstance(exc, aiohttp.ClientConnectorError) else "connection refused or " \
        "no route"
    return fail(name, f"{where} is not reachable ({reason}, {HTTP_TIMEOUT_S:.0f} s timeout)", fix)


def provider_probes(loaded: LoadedConfig) -> list[Probe]:
    """One probe per model provider the config uses (offline needs none)."""
    from board.llm.registry import split_model
    from bot.app import provider_settings

    used = sorted({split_model(m)[0] for m in loaded.models()} - {"offline"})
    probes: list[Probe] = []
    for provider in used:
        settings = provider_settings(loaded, provider)
        if provider == "openai":
            base = (settings.base_url or OPENAI_URL).rstrip("/")
            url, headers = base + "/models", {"Authorization": f"Bearer {settings.api_key or ''}"}
        else:
            base = (settings.base_url or ANTHROPIC_URL).rstrip("/")
            url = base + ("/models" if base.endswith("/v1") else "/v1/models")
            headers = {"x-api-key": settings.api_key or "", "anthropic-version": "2023-06-01"}
        probes.append(_provider_probe(provider, url, base, headers, settings.key_env))
    return probes


def _provider_probe(provider: str, url: str, base: str, headers: dict[str, str], key_env: str) -> Probe:
    import aiohttp

    name = f"provider {provider}"

    async def probe(session: aiohttp.ClientSession) -> Check:
        try:
            async with session.get(url, headers=headers) as resp:
                status = resp.status
        except (aiohttp.ClientError, TimeoutError) as exc:
            return _unreachable(name, base, exc, f"check the network / proxy, or llm.providers.{provider}.base_url")
        if status in (401, 403):
            return _refused(name, status, "the API key", f"export a valid key in {key_env}")
        return ok(name, f"{base} answers (HTTP {status})")

    return probe


def _role_bot_probe(role: str, token: str, base: str) -> Probe:
    """``getMe`` of a role's own bot (``board.agents.<role>.telegram_token``); the token is never shown."""
    import aiohttp

    name = f"telegram bot of {role}"

    async def probe(session: aiohttp.ClientSession) -> Check:
        try:
            async with session.get(f"{base}{token}/getMe") as resp:
                status = resp.status
                body = await resp.json(content_type=None) if status == 200 else {}
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            return _unreachable(name, base, exc, "check the network, or telegram.api_base_url")
        if status in (401, 404):
            return _refused(name, status, "the bot token",
                            f"copy that bot's token from @BotFather into board.agents.{role}.telegram_token "
                            "(until then the main bot sends its messages)")
        user = (body.get("result") or {}).get("username") if isinstance(body, dict) else None
        return ok(name, f"{base} answers getMe" + (f": @{user}" if user else f" (HTTP {status})"))

    return probe


def channel_probes(loaded: LoadedConfig) -> list[Probe]:
    """Telegram's ``getMe`` and WhatsApp's phone number, for the enabled channels."""
    import aiohttp

    probes: list[Probe] = []
    telegram = loaded.config.telegram
    if telegram.enabled and telegram.token is not None:
        token = telegram.token.get_secret_value()
        base = telegram.api_base_url

        async def telegram_probe(session: aiohttp.ClientSession) -> Check:
            try:
                async with session.get(f"{base}{token}/getMe") as resp:
                    status = resp.status
                    body = await resp.json(content_type=None) if status == 200 else {}
            except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
                return _unreachable("channel telegram", base, exc, "check the network, or telegram.api_base_url")
            if status in (401, 404):
                return _refused("channel telegram", status, "the bot token",
                                "copy the token from @BotFather into TELEGRAM_BOT_TOKEN")
            user = (body.get("result") or {}).get("username") if isinstance(body, dict) else None
            return ok("channel telegram", f"{base} answers getMe" + (f": @{user}" if user else f" (HTTP {status})"))

        probes.append(telegram_probe)
        probes += [_role_bot_probe(role, agent.telegram_token.get_secret_value(), base)
                   for role, agent in loaded.config.board.agents.items() if agent.telegram_token is not None]
    whatsapp = loaded.config.whatsapp
    if whatsapp.enabled and whatsapp.access_token is not None:
        wa_token = whatsapp.access_token.get_secret_value()
        url = f"{whatsapp.graph_base_url}/{whatsapp.api_version}/{whatsapp.phone_number_id}"

        async def whatsapp_probe(session: aiohttp.ClientSession) -> Check:
            try:
                async with session.get(url, headers={"Authorization": f"Bearer {wa_token}"}) as resp:
                    status = resp.status
            except (aiohttp.ClientError, TimeoutError) as exc:
                return _unreachable("channel whatsapp", whatsapp.graph_base_url, exc,
                                    "check the network, or whatsapp.graph_base_url")
            if status in (401, 403):
                return _refused("channel whatsapp", status, "the access token",
                                "create a system user token with whatsapp_business_messaging and set "
                                "WHATSAPP_ACCESS_TOKEN")
            if status == 400 or status == 404:
                return fail("channel whatsapp", f"the Graph API does not know phone number id "
                            f"{whatsapp.phone_number_id} (HTTP {status})",
                            "copy the phone number id from WhatsApp > API Setup into whatsapp.phone_number_id")
            return ok("channel whatsapp", f"{whatsapp.graph_base_url} knows number {whatsapp.phone_number_id} "
                                          f"(HTTP {status})")

        probes.append(whatsapp_probe)
    return probes + _slack_probes(loaded)


def _slack_probes(loaded: LoadedConfig) -> list[Probe]:
    """Slack's ``auth.test`` and granted scopes (:mod:`bot.channels.slack.doctor`), when the channel is on."""
    if not loaded.config.slack.enabled:
        return []
    from bot.channels.slack.doctor import SlackProbe, slack_probes

    def as_check(probe: SlackProbe) -> Probe:
        async def check(session: aiohttp.ClientSession) -> Check:
            found = await probe(session)
            return Check(found.name, found.state.value, found.detail, found.fix)

        return check

    return [as_check(p) for p in slack_probes(loaded.config.slack)]


# -- the command --------------------------------------------------------------------------


async def run_checks(config_path: str | None, *, offline: bool) -> list[Check]:
    """Every check for the config at ``config_path`` (None: the usual search)."""
    import aiohttp

    from bot.config import ConfigError
    from bot.config.load import load_config

    try:
        loaded = load_config(config_path)
    except ConfigError as exc:
        return [fail("config", str(exc), "fix the keys named above (config.example.yaml lists every option)")]
    if loaded.source is None:
        return [fail("config", f"no board found: no sabha.yaml in {loaded.base_dir} or any folder above it",
                     "run sabha from inside a board's folder, give --config, or make one with `sabha init DIR`")]
    checks = [ok("config", f"{loaded.source} (found by {loaded.found_by.value}) is valid")]
    checks += check_secrets(loaded)
    checks += check_voice(loaded)
    checks.append(check_workspace(loaded))
    checks.append(check_data_dir(loaded.data_dir))
    checks += await check_state(loaded)
    checks.append(await check_recall(loaded))
    checks += await check_mcp(loaded, offline=offline)
    probes = [*provider_probes(loaded), *channel_probes(loaded)]
    if offline:
        if probes or loaded.config.discord.enabled:
            checks.append(Check("network", "SKIP", f"{len(probes) + loaded.config.discord.enabled} endpoint "
                                                   "check(s) skipped (--offline)"))
        return checks
    timeout = aiohttp.ClientTimeout(total=HTTP_TIMEOUT_S)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        for probe in probes:
            checks.append(await probe(session))
        checks += await discord_checks(loaded, session)
    return checks


async def discord_checks(loaded: LoadedConfig, session: aiohttp.ClientSession) -> list[Check]:
    """The Discord channel's checks (:mod:`bot.channels.discord.checks`: token, intent, server permissions)."""
    if not loaded.config.discord.enabled:
        return []
    from bot.channels.discord.checks import discord_findings

    return [ok(f.name, f.detail) if f.fix is None else fail(f.name, f.detail, f.fix)
            for f in await discord_findings(loaded.config.discord, session)]


async def cmd_doctor(args: argparse.Namespace) -> int:
    """``sabha doctor``: print each check; exit 1 when any failed."""
    checks = await run_checks(getattr(args, "config", None), offline=args.offline)
    failed = [c for c in checks if c.state == "FAIL"]
    for c in checks:
        emit(f"{c.state:<5} {c.name}: {c.detail}")
        if c.fix:
            emit(f"      fix: {c.fix}")
    warned = [c for c in checks if c.state == "WARN"]
    counted = len(checks) - len(warned)
    emit((f"{len(failed)} of {counted} checks failed" if failed else f"All {counted} checks passed")
         + (f"; {len(warned)} warning(s)." if warned else "."))
    return 1 if failed else 0


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """``sabha doctor [--offline]``."""
    p = sub.add_parser("doctor", parents=[common], help="check config, secrets, workspace, storage and endpoints",
                       description="Check the setup: config, secrets, workspace, data dir, the state store (SQLite, "
                                   "or with state.url the PostgreSQL server and its schema), each MCP server of "
                                   "mcp.servers (started and stopped again), and (unless "
                                   "--offline) that each model provider and channel endpoint answers. Each check "
                                   "prints OK or FAIL with the fix; exit code 1 when any fails.")
    p.add_argument("--offline", action="store_true", help="skip the network checks")
    p.set_defaults(handler=cmd_doctor)

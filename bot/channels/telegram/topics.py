"""Forum topics: which topic of the board's forum belongs to which role.

The map comes from three places, first wins: ``telegram.topics`` in config, the
``telegram_topics`` table of the state db (topics Sabha created earlier), and, with
``auto_create_topics``, topics created now with ``createForumTopic`` (named like
``💰 Finance``) and stored at once, so a restart never creates a duplicate. The chair
(``general``) lives in the forum's General topic and gets no topic of its own.

Problems Telegram reports (the group is not a forum, the bot may not manage topics, the
bot is not in the group) are logged with what to do, recorded in :attr:`Topics.problem`
for ``/status``, and never stop the channel: DMs and General keep working.

Replicas: the first stored topic of a role wins (:meth:`TopicStore.claim`). Two replicas starting at once
may both create a role's topic in Telegram; the one whose row lands second uses the winner's topic and
deletes its own duplicate (best effort), so the forum ends with one topic per role.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from telegram import Bot
from telegram.error import BadRequest, Forbidden, TelegramError

from board.roles import GENERAL
from board.storage import Database
from board.workspace.souls import AgentProfile

log = logging.getLogger("sabha.telegram.topics")

TopicSource = Literal["config", "db", "created"]


@dataclass(frozen=True)
class TopicEntry:
    """One role's topic."""

    role: str
    thread_id: int
    name: str
    source: TopicSource


def topic_name(profile: AgentProfile) -> str:
    """The name a role's topic gets, e.g. ``💰 Finance`` (Telegram allows 128 characters)."""
    return f"{profile.emoji} {profile.name}".strip()[:128]


class TopicStore:
    """The ``telegram_topics`` table."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def load(self, chat_id: int) -> dict[str, tuple[int, str]]:
        """Stored topics of a chat: role -> (thread id, name)."""
        rows = await self.db.fetchall(
            "SELECT role, thread_id, name FROM telegram_topics WHERE chat_id = ?", (str(chat_id),)
        )
        return {row["role"]: (int(row["thread_id"]), row["name"]) for row in rows}

    async def claim(self, chat_id: int, role: str, thread_id: int, name: str) -> tuple[int, str]:
        """Store a topic just created unless the role has one stored already (another replica's, made at
        the same moment); the role's topic as stored now: (thread id, name), ours or the winner's."""
        won = await self.db.fetchone(
            "INSERT INTO telegram_topics(chat_id, role, thread_id, name, created_at) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(chat_id, role) DO NOTHING RETURNING thread_id",
            (str(chat_id), role, int(thread_id), name, datetime.now(UTC).isoformat(timespec="seconds")))
        if won is not None:
            return thread_id, name
        row = await self.db.fetchone("SELECT thread_id, name FROM telegram_topics WHERE chat_id = ? AND role = ?",
                                     (str(chat_id), role))
        if row is None:  # the winner's row was forgotten in between (its topic deleted): ours is free again
            return await self.claim(chat_id, role, thread_id, name)
        return int(row["thread_id"]), str(row["name"])

    async def save(self, chat_id: int, role: str, thread_id: int, name: str) -> None:
        """Remember a topic (replacing an earlier one of the same role)."""
        await self.db.execute(
            "INSERT INTO telegram_topics(chat_id, role, thread_id, name, created_at) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(chat_id, role) DO UPDATE SET thread_id = excluded.thread_id, name = excluded.name, "
            "created_at = excluded.created_at",
            (str(chat_id), role, int(thread_id), name, datetime.now(UTC).isoformat(timespec="seconds")),
        )

    async def forget(self, chat_id: int, role: str) -> None:
        """Drop a stored topic (it was deleted in Telegram); the next start recreates it."""
        await self.db.execute("DELETE FROM telegram_topics WHERE chat_id = ? AND role = ?", (str(chat_id), role))


class Topics:
    """The role <-> topic map of one forum."""

    def __init__(self, chat_id: int, store: TopicStore, configured: dict[str, int] | None = None) -> None:
        self.chat_id = chat_id
        self.store = store
        self.configured = dict(configured or {})
        self.entries: dict[str, TopicEntry] = {}
        self.problem: str | None = None

    async def load(self) -> None:
        """Read config and db (no Telegram calls)."""
        entries = {role: TopicEntry(role, thread, name, "db") for role, (thread, name) in
                   (await self.store.load(self.chat_id)).items()}
        for role, thread in self.configured.items():
            entries[role] = TopicEntry(role, thread, entries[role].name if role in entries else role, "config")
        self.entries = entries

    def role_for(self, thread_id: int | None) -> str | None:
        """The role whose topic this is (None for General or an unmapped topic)."""
        if thread_id is None:
            return None
        for entry in self.entries.values():
            if entry.thread_id == thread_id:
                return entry.role
        return None

    def thread_for(self, role: str) -> int | None:
        """The topic of a role (None: General, or no topic yet)."""
        entry = self.entries.get(role)
        return entry.thread_id if entry else None

    def missing(self, roles: Iterable[str]) -> list[str]:
        """Roles (other than the chair) without a topic."""
        return [r for r in roles if r != GENERAL and r not in self.entries]

    async def ensure(self, bot: Bot, profiles: Iterable[AgentProfile], *, auto_create: bool = True) -> list[TopicEntry]:
        """Load the map and, with ``auto_create``, create a topic for each role that has
        none; returns the topics created now. Never raises for Telegram problems."""
        await self.load()
        profiles = list(profiles)
        unknown = sorted(set(self.configured) - {p.role for p in profiles})
        if unknown:
            log.warning("telegram.topics names roles the board does not have (%s); messages in those topics go "
                        "to the chair. Roles: %s", ", ".join(unknown), ", ".join(p.role for p in profiles))
        wanted = [p for p in profiles if p.role != GENERAL and p.role not in self.entries]
        if not wanted or not auto_create:
            if wanted:
                log.info("telegram: roles without a topic (auto_create_topics is off): %s; "
                         "their messages in General go to the chair", ", ".join(p.role for p in wanted))
            return []
        if not await self._check_forum(bot):
            return []
        created: list[TopicEntry] = []
        stored = await self.store.load(self.chat_id)  # another replica may have made some since load()
        for profile in wanted:
            if profile.role in stored:
                thread, known = stored[profile.role]
                self.entries[profile.role] = TopicEntry(profile.role, thread, known, "db")
                continue
            name = topic_name(profile)
            try:
                topic = await bot.create_forum_topic(chat_id=self.chat_id, name=name)
            except BadRequest as exc:
                self._report(exc)
                break
            except Forbidden as exc:
                self._report(exc)
                break
            except TelegramError as exc:
                self.problem = f"creating topic {name!r} failed: {exc}"
                log.error("telegram: %s; will try again at the next start", self.problem)
                break
            thread, kept = await self.store.claim(self.chat_id, profile.role, topic.message_thread_id, name)
            if thread != topic.message_thread_id:
                self.entries[profile.role] = TopicEntry(profile.role, thread, kept, "db")
                await self._drop_duplicate(bot, topic.message_thread_id, profile.role, thread)
                continue
            entry = TopicEntry(profile.role, thread, name, "created")
            self.entries[profile.role] = entry
            created.append(entry)
            log.info("telegram: created topic %r (thread %d) for %s in chat %s",
                     name, entry.thread_id, profile.role, self.chat_id)
        return created

    async def _drop_duplicate(self, bot: Bot, mine: int, role: str, winner: int) -> None:
        """Another replica stored ``role``'s topic first: delete the one made here (best effort)."""
        log.info("telegram: another replica created %s's topic first (thread %d); deleting the duplicate %d",
                 role, winner, mine)
        try:
            await bot.delete_forum_topic(chat_id=self.chat_id, message_thread_id=mine)
        except TelegramError as exc:
            log.warning("telegram: could not delete the duplicate topic %d of %s in chat %s (%s); delete it by "
                        "hand, messages there go to the chair", mine, role, self.chat_id, exc)

    async def _check_forum(self, bot: Bot) -> bool:
        try:
            chat = await bot.get_chat(self.chat_id)
        except (BadRequest, Forbidden) as exc:
            self.problem = (f"telegram.group_id {self.chat_id} cannot be read ({exc.message}): add the bot to the "
                            "group and check the id (see README, 'Telegram')")
            log.error("telegram: %s; DMs keep working", self.problem)
            return False
        except TelegramError as exc:
            self.problem = f"could not read chat {self.chat_id}: {exc}"
            log.error("telegram: %s; will try again at the next start", self.problem)
            return False
        if not getattr(chat, "is_forum", False):
            self.problem = (f"chat {self.chat_id} is not a forum: in the group's settings turn on Topics, then "
                            "restart Sabha; until then DMs keep working and the group talks to the chair")
            log.error("telegram: %s", self.problem)
            return False
        return True

    def _report(self, exc: TelegramError) -> None:
        text = getattr(exc, "message", str(exc))
        lowered = text.lower()
        if "not enough rights" in lowered or "rights" in lowered or isinstance(exc, Forbidden):
            self.problem = (f"the bot may not create topics in chat {self.chat_id} ({text}): make it an admin "
                            "with the 'Manage topics' right, then restart Sabha")
        elif "not a forum" in lowered:
            self.problem = (f"chat {self.chat_id} is not a forum ({text}): turn on Topics in the group's settings, "
                            "then restart Sabha")
        else:
            self.problem = f"creating topics in chat {self.chat_id} failed: {text}"
        log.error("telegram: %s; DMs and General keep working", self.problem)

    async def forget(self, role: str) -> None:
        """The role's topic is gone in Telegram: drop it so the next start recreates it."""
        entry = self.entries.pop(role, None)
        if entry is not None and entry.source != "config":
            await self.store.forget(self.chat_id, role)
        log.error("telegram: topic %s of %s no longer exists in chat %s; %s", entry.thread_id if entry else "?",
                  role, self.chat_id,
                  "fix telegram.topics in the config" if entry and entry.source == "config"
                  else "it will be recreated at the next start")

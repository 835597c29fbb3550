"""Discord's own tables on both storage backends (SQLite and PostgreSQL): an interaction's token kept once (a
replayed interaction keeps its first row), marked acknowledged, old ones dropped; a follow-up is only tried with a
token Discord took and younger than Discord's 15 minutes; the messages that carry a decision's buttons recorded
once."""

from __future__ import annotations

import pytest

from board.storage import Database
from bot.channels.discord.followups import TOKEN_LIFE_S, InteractionTokens
from bot.channels.discord.verdicts import DecisionButtons

pytestmark = pytest.mark.backends


async def test_an_interactions_token_is_kept_once_and_known_for_its_life(database: Database) -> None:
    now = [1_000_000.0]
    tokens = InteractionTokens(database, clock=lambda: now[0])
    await tokens.keep("11", "token-a", "99", "press")
    await tokens.keep("11", "token-b", "99", "press")  # a gateway replay: the first row stays
    stored = await tokens.get("11")
    assert stored is not None and stored.token == "token-a" and not stored.acknowledged
    await tokens.acknowledged("11")
    stored = await tokens.get("11")
    assert stored is not None and stored.acknowledged and stored.created_at == now[0]
    assert await tokens.get("12") is None

    now[0] += TOKEN_LIFE_S + 1  # past the token's life: dropped later, never used
    await tokens.forget_before(24 * 3600.0)
    assert await tokens.get("11") is not None
    now[0] += 24 * 3600.0
    await tokens.forget_before(24 * 3600.0)
    assert await tokens.get("11") is None


async def test_a_decisions_button_messages_are_recorded_once(database: Database) -> None:
    buttons = DecisionButtons(database, client=None)  # type: ignore[arg-type]  # no edit in this test
    await buttons.record("m-1", 5, 6)
    await buttons.record("m-1", 5, 6)
    await buttons.record("m-1", 5, 7)
    rows = await database.fetchall("SELECT channel_id, message_id FROM discord_button_posts WHERE subject = ? "
                                   "ORDER BY message_id", ("m-1",))
    assert [(r["channel_id"], r["message_id"]) for r in rows] == [("5", "6"), ("5", "7")]

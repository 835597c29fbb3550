"""Discord's pieces without a server: where a message sits (placement), how long text is split, the place rows on
both storage backends, and the config section's checks."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from board.app import Board
from bot.channels.discord.config import DiscordSection
from bot.channels.discord.format import MAX_CHARS, split_text
from bot.channels.discord.inbound import Ignored, Incoming, Where, place_of
from bot.channels.discord.store import DiscordPlaceKind, Place, PlaceStore

SECTION = DiscordSection.model_validate({
    "token": "t", "application_id": "1", "guild_id": "10", "channels": {"Finance": 20}, "board_channel": "21",
    "forum_channel": "22", "allowed_user_ids": ["30", 31]})


def msg(channel: str, *, guild: str | None = "10", parent: str | None = None, author: str = "30",
        **kw: object) -> Incoming:
    return Incoming(message_id="99", channel_id=channel, author_id=author, author_name="Ada", content="hi",
                    guild_id=guild, parent_id=parent, **kw)  # type: ignore[arg-type]


def test_a_message_in_an_advisors_channel_starts_a_thread_with_the_messages_id() -> None:
    where = place_of(msg("20"), SECTION, {}, bot_id="1")
    assert isinstance(where, Where)
    assert (where.chat_id, where.role, where.is_group) == ("99", "finance", True)
    assert where.starts_thread == Place("99", DiscordPlaceKind.THREAD, parent_id="20", role="finance", started=False)


def test_the_board_channel_and_the_forum_let_the_words_choose_the_advisor() -> None:
    board = place_of(msg("21"), SECTION, {}, bot_id="1")
    assert isinstance(board, Where) and board.role is None and board.addressed_role_sticks
    post = place_of(msg("77", parent="22"), SECTION, {}, bot_id="1")
    assert isinstance(post, Where) and post.chat_id == "77" and post.addressed_role_sticks


def test_a_known_thread_keeps_its_advisor_and_a_dm_is_the_users() -> None:
    known = {"77": Place("77", DiscordPlaceKind.THREAD, parent_id="21", role="critic")}
    where = place_of(msg("77"), SECTION, known, bot_id="1")
    assert isinstance(where, Where) and (where.chat_id, where.role) == ("77", "critic")
    dm = place_of(msg("55", guild=None), SECTION, {}, bot_id="1")
    assert isinstance(dm, Where) and (dm.chat_id, dm.is_group, dm.place.kind) == ("dm-30", False, DiscordPlaceKind.DM)


@pytest.mark.parametrize(("message", "why"), [
    (msg("20", author="1"), Ignored.OWN),
    (msg("20", from_bot=True), Ignored.BOT),
    (msg("20", system=True), Ignored.SYSTEM),
    (msg("20", guild="11"), Ignored.GUILD),
    (msg("23"), Ignored.UNKNOWN_THREAD),
    (msg("23", parent="24"), Ignored.CHANNEL),
])
def test_what_is_not_the_boards_is_ignored(message: Incoming, why: Ignored) -> None:
    assert place_of(message, SECTION, {}, bot_id="1") is why


def test_long_text_is_split_within_discords_limit_and_code_stays_code() -> None:
    words = "word " * 1000
    parts = split_text(words)
    assert all(len(p) <= MAX_CHARS for p in parts) and "".join(parts) == words
    code = "intro\n```python\n" + "x = 1\n" * 600 + "```\nend"
    parts = split_text(code)
    assert len(parts) == 2 and all(len(p) <= MAX_CHARS for p in parts)
    assert parts[0].endswith("```") and parts[1].startswith("```python\n")
    assert split_text("   ") == []
    assert all(len(p) <= MAX_CHARS for p in split_text("😀" * 3000))  # never between a surrogate pair's halves


def test_the_section_reads_ids_as_text_and_names_what_is_wrong() -> None:
    assert SECTION.channels == {"finance": "20"} and SECTION.allowed_user_ids == ["30", "31"]
    assert SECTION.owner == "30"
    with pytest.raises(ValidationError, match="not a Discord channel id"):
        DiscordSection.model_validate({"channels": {"finance": "#finance"}})
    with pytest.raises(ValidationError, match="named twice"):
        DiscordSection.model_validate({"channels": {"finance": "5"}, "board_channel": "5"})
    with pytest.raises(ValidationError, match="application_id is not set"):
        DiscordSection.model_validate({"token": "t"})
    assert DiscordSection.model_validate({"board_channel": ""}).board_channel is None  # an unset ${VAR}


@pytest.mark.backends
async def test_places_are_kept_and_the_newest_message_never_moves_back(board: Board) -> None:
    store = PlaceStore(board.parts.db)
    await store.load()
    await store.put(Place("77", DiscordPlaceKind.THREAD, parent_id="20", role="finance", started=False))
    await store.seen("77", "1000")
    await store.seen("77", "999")  # older (shorter text, smaller number): ignored
    await store.started("77")
    again = PlaceStore(board.parts.db)
    await again.load()
    assert again.get("77") == Place("77", DiscordPlaceKind.THREAD, parent_id="20", role="finance", started=True,
                                    last_message_id="1000")

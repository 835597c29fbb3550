"""Recall by words a big board says all the time (issue 43's "Scale": recall <= 50 ms at 1,000,000 lines; a word in
half the index made SQLite rank half the index): a common word only weighs in the ranking, the rarer words of the
question find the passages, all common words together find those that have them all, and a question of common
words that are never together still finds the newest passages with them; what the asker may see holds on every
path. Passages are stored as the indexer leaves them; the threshold is the search's own parameter, set low."""

from __future__ import annotations

from board.recall.lexical import PassageSearch
from board.recall.passages import Asker
from board.storage import Database

MEMBER = "id:telegram:7"
STRANGER = "id:telegram:8"


async def _say(db: Database, n: int, audience: str, text: str) -> None:
    await db.execute("INSERT INTO recall_passages (source, ref, audience, speaker, cite, said_at, text) "
                     "VALUES ('conversation', ?, ?, 'user', '[finance, 2026-11-01]', '2026-11-01', ?)",
                     (f"s#{n}", audience, text))


async def test_common_words_weigh_in_the_ranking_but_rare_ones_find_the_passages(database: Database) -> None:
    n = 0
    for k in range(40):  # "office" and "pune" are common (in more than 10 passages each)
        await _say(database, n := n + 1, MEMBER, f"the office in pune again, note {k}")
        await _say(database, n := n + 1, STRANGER, f"pune office chatter {k}")
    await _say(database, n := n + 1, MEMBER, "the pune office lease was signed on friday")
    await _say(database, n := n + 1, STRANGER, "my lease in pune is secret")
    await _say(database, n := n + 1, MEMBER, "canteen budget for the office")
    search = PassageSearch(database, common_at=10, window=30)
    member = Asker(frozenset({MEMBER}), board=True)
    found = await search.search("what about the pune office lease?", member, limit=5)
    assert found and found[0].text == "the pune office lease was signed on friday", [p.text for p in found]
    assert all("secret" not in p.text for p in found)  # the stranger's words never
    # every word common and together: passages that have them all
    together = await search.search("pune office", member, limit=5)
    assert len(together) == 5 and all("pune" in p.text and "office" in p.text for p in together)
    # common words never said together: the newest passages with any of them, still only the member's
    for k in range(15):
        await _say(database, n := n + 1, MEMBER, f"canteen menu {k}")
    apart = await search.search("canteen pune", member, limit=5)
    assert len(apart) == 5 and all(("canteen" in p.text or "pune" in p.text) and "chatter" not in p.text
                                   for p in apart), [p.text for p in apart]
    # one common word alone: the newest window, ranked; the stranger's never
    alone = await search.search("pune", member, limit=5)
    assert len(alone) == 5 and all("chatter" not in p.text and "secret" not in p.text for p in alone)
    owner = await search.search("pune lease", Asker.owner_view(), limit=5)
    assert {p.text for p in owner[:2]} == {"the pune office lease was signed on friday", "my lease in pune is secret"}

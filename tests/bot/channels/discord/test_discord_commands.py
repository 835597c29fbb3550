"""Slash commands on a real ``sabha run`` against the fake Discord: registered once per start for the configured
server (Discord's bulk overwrite: the same list again after a restart, nothing added twice), and ``/board`` used in
an advisor's channel is stored, answered within Discord's 3 seconds with a deferral ("thinking..."), then its
answer comes as the interaction's follow-up. The interactions are Discord's documented sample payloads
(tests/data/discord/) with this server's ids."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.discord import FINANCE, OWNER, STRANGER, places
from tests.support.discord_board import echo_running
from tests.support.fakes.discord_interactions import FakeDiscordMore
from tests.support.fakes.echo_model import EchoModel

#: Discord's rule: an interaction is answered within 3 seconds (the fake times it from the dispatch).
ANSWER_WITHIN_S = 3.0


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscordMore]:
    async with FakeDiscordMore() as server:
        yield places(server)  # type: ignore[misc]


async def test_the_commands_are_registered_once_per_start_and_the_same_after_a_restart(
        tmp_path: Path, fake: FakeDiscordMore, echo_model: EchoModel) -> None:
    sabha = await echo_running(tmp_path, fake, echo_model)
    try:
        [first] = fake.extras.overwrites
        assert [c["name"] for c in first] == ["board", "meeting", "decisions", "help"]
        advisor = next(o for o in first[0]["options"] if o["name"] == "advisor")
        assert {"general", "finance", "critic"} <= {c["value"] for c in advisor["choices"]}
        await fake.drop()  # a reconnect is no new start: nothing registered again
        await fake.wait_for(lambda: fake.resumes >= 1 or fake.identifies >= 2, "the reconnect")
        await sabha.wait_for_log(r"discord: gateway session resumed")
    finally:
        await sabha.close()
    assert len(fake.extras.overwrites) == 1
    sabha = await echo_running(tmp_path, fake, echo_model)
    await sabha.close()
    assert len(fake.extras.overwrites) == 2 and fake.extras.overwrites[1] == first  # an overwrite: the same list
    assert ("PUT", f"/applications/{fake.extras.application_id}/guilds/{fake.extras.guild_id}/commands") not in \
        fake.requests  # went to the commands route, not the core fake's catch-all


async def test_board_is_deferred_within_three_seconds_and_answered_as_its_follow_up(
        tmp_path: Path, fake: FakeDiscordMore, echo_model: EchoModel) -> None:
    sabha = await echo_running(tmp_path, fake, echo_model)
    try:
        iid = fake.slash(FINANCE, OWNER, "board", {"question": "Q100 what is our runway?"}, name="Ada")
        await fake.extras.wait_for(lambda: any("Q100" in f.data.get("content", "") for f in fake.extras.followups))
        response = fake.extras.response_to(iid)
        assert response is not None and response.type == 5  # deferred: "thinking...", the answer follows
        assert response.after_s is not None and response.after_s < ANSWER_WITHIN_S
        [answer] = [f for f in fake.extras.followups if "Q100" in f.data.get("content", "")]
        assert answer.method == "POST" and answer.token == f"interaction-token-{iid}"
        assert answer.data["content"].splitlines()[0].endswith("Finance**")  # finance's channel: finance answers
        assert answer.data["allowed_mentions"] == {"parse": []}
        assert not any("Q100" in m.content for m in fake.sent)  # not posted twice (as a message too)

        stranger = fake.slash(FINANCE, STRANGER, "board", {"question": "Q101 let me in"}, name="Eve")
        await fake.extras.wait_for(lambda: fake.extras.response_to(stranger) is not None)
        refused = fake.extras.response_to(stranger)
        assert refused is not None and refused.type == 4 and refused.ephemeral
        assert "only the board's members" in refused.data["content"]
    finally:
        await sabha.close()
    assert not any("Q101" in str(b) for b in echo_model.bodies)
    assert "Traceback" not in sabha.log, sabha.log


async def test_an_interaction_replayed_after_a_resume_is_answered_once(
        tmp_path: Path, fake: FakeDiscordMore, echo_model: EchoModel) -> None:
    """The gateway delivers at least once: after a RESUME it may replay an INTERACTION_CREATE already taken in.
    The intake skips it (its id is stored), Discord's "already acknowledged" (40060) to the second response is
    taken as done, and the answer comes once."""
    sabha = await echo_running(tmp_path, fake, echo_model)
    try:
        iid = fake.slash(FINANCE, OWNER, "board", {"question": "Q110 once only"}, name="Ada")
        await fake.extras.wait_for(lambda: any("Q110" in f.data.get("content", "") for f in fake.extras.followups))
        fake.replay_extra = 100  # the replay starts early: the interaction comes again
        await fake.drop()
        await sabha.wait_for_log(r"gateway session resumed")
        sentinel = fake.slash(FINANCE, OWNER, "board", {"question": "Q111 sentinel"}, name="Ada")
        await fake.extras.wait_for(lambda: any("Q111" in f.data.get("content", "") for f in fake.extras.followups))
    finally:
        await sabha.close()
    assert sum("Q110" in f.data.get("content", "") for f in fake.extras.followups) == 1
    assert [r.interaction_id for r in fake.extras.responses].count(iid) == 1
    assert fake.extras.answered_again == 1  # the replay was answered again and Discord refused it (40060)
    assert fake.extras.response_to(sentinel) is not None
    assert sum("Q110" in q for q in echo_model.questions) == 1  # one model call
    assert "Traceback" not in sabha.log, sabha.log


async def test_an_answer_whose_interaction_token_discord_no_longer_knows_is_posted_as_a_message(
        tmp_path: Path, fake: FakeDiscordMore, echo_model: EchoModel) -> None:
    """Discord forgets an interaction's token after 15 minutes (an answer sent after a long outage): its follow-up
    is refused as an unknown webhook (10015), and the answer is posted as an ordinary message where the command was
    used, once; nothing is lost."""
    sabha = await echo_running(tmp_path, fake, echo_model)
    try:
        echo_model.hold()
        iid = fake.slash(FINANCE, OWNER, "board", {"question": "Q120 the answer comes late"}, name="Ada")
        await fake.extras.wait_for(lambda: fake.extras.response_to(iid) is not None)
        fake.extras.expired_tokens.add(f"interaction-token-{iid}")
        echo_model.release()
        await fake.wait_for(lambda: any("Q120" in m.content for m in fake.sent), "the answer as a message")
    finally:
        await sabha.close()
    assert [m.channel_id for m in fake.sent if "Q120" in m.content] == [FINANCE]
    assert not any("Q120" in f.data.get("content", "") for f in fake.extras.followups)
    assert "Traceback" not in sabha.log, sabha.log

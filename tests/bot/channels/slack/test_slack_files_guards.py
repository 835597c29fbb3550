"""The Slack file download's guards, on slack_sdk's client against the fake Slack: the bot token goes only to
Slack's file host or the Web API's own; a private URL answered with Slack's HTML sign-in page (a refused token)
is never taken for the file; a deleted file is told as gone."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from board.media.attachment import Attachment, MediaKind, MediaRef
from board.media.blobs import BlobStore
from board.media.problems import MediaProblem, Problem
from bot.channels.slack.files import SlackFiles
from bot.channels.slack.outbound import SlackWeb
from tests.support.fakes.slack_socket import FakeSlack, SlackFile


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as server:
        yield server


def ref(shared: SlackFile) -> Attachment:
    return Attachment(kind=MediaKind.DOCUMENT, mime=shared.mimetype, name=shared.name, size=len(shared.data),
                      source=MediaRef(channel="slack", id=shared.id))


async def fetch(files: SlackFiles, tmp_path: Path, attachment: Attachment) -> bytes:
    with BlobStore(tmp_path / "media").sink(1 << 20, attachment.label) as sink:
        await files.fetch(attachment, sink)
        return sink.finish().path.read_bytes()


async def test_the_token_goes_only_to_slack_and_a_sign_in_page_is_not_the_file(slack: FakeSlack,
                                                                             tmp_path: Path) -> None:
    web = SlackWeb(slack.token, slack.base_url)
    await web.open()
    try:
        files = SlackFiles(web)
        memo = slack.add_file("memo.txt", b"hello from the memo\n")
        assert await fetch(files, tmp_path, ref(memo)) == b"hello from the memo\n"
        assert slack.downloads == [(memo.id, f"Bearer {slack.token}")]

        # a files.info that names another host (here another local server): not fetched, the token never leaves
        async with FakeSlack() as other:
            elsewhere = slack.add_file("evil.txt", b"x")
            other.files[elsewhere.id] = elsewhere
            original = slack._files_info

            def moved(args: dict[str, object]) -> dict[str, object]:
                answer = original(args)
                answer["file"] = elsewhere.info(f"http://127.0.0.1:{other.port}")
                return answer

            slack._files_info = moved  # type: ignore[method-assign]
            with pytest.raises(MediaProblem) as refused:
                await fetch(files, tmp_path, ref(elsewhere))
            slack._files_info = original  # type: ignore[method-assign]
            assert refused.value.problem is Problem.UNAVAILABLE
            assert other.downloads == [] and [f for f, _ in slack.downloads] == [memo.id]

        # Slack's sign-in page (what a refused token gets, with 200) is not taken for the file
        slack.sign_in_page = True
        with pytest.raises(MediaProblem) as page:
            await fetch(files, tmp_path, ref(memo))
        assert page.value.problem is Problem.UNREADABLE and "could not be downloaded" in str(page.value)
        slack.sign_in_page = False

        # deleted in Slack: told as gone
        del slack.files[memo.id]
        with pytest.raises(MediaProblem) as gone:
            await fetch(files, tmp_path, ref(memo))
        assert gone.value.problem is Problem.EXPIRED and "no longer in Slack" in str(gone.value)
    finally:
        await web.close()

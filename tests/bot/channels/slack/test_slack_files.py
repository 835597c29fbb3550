"""Files shared in Slack on a real ``sabha run``: the post's ``files[]`` are stored as references at receipt; in
the lane ``files.info`` gives the private URL and the bytes come with the bot token as a bearer. A document is
read (its text reaches the model's prompt, quoted); a file over ``media.max_bytes`` is refused by its declared
size before a byte moves, with a line that says so, and the words with it are still answered."""

from __future__ import annotations

from pathlib import Path

from tests.support.daemon import SabhaProcess
from tests.support.fakes.echo_model import EchoModel
from tests.support.fakes.slack_api import event_callback, message_event
from tests.support.fakes.slack_socket import FakeSlack, SlackFile
from tests.support.slack import BOARD, NAMES, OWNER, next_ts, slack_env, slack_poster, write_slack_config
from tests.support.telegram import eventually


def share(slack: FakeSlack, shared: SlackFile, text: str) -> dict[str, object]:
    """A ``file_share`` post in the board channel (the file object as Slack puts it in the event)."""
    info = shared.info(f"http://127.0.0.1:{slack.port}")
    return event_callback(message_event(BOARD, OWNER, text, next_ts(), subtype="file_share", files=[info]))


def answer_in(slack: FakeSlack, ts: str, marker: str) -> list[str]:
    return [m.text for m in slack.messages if m.thread_ts == ts and marker in m.text]


async def test_a_document_is_read_and_an_oversize_file_is_refused_with_a_line(tmp_path: Path,
                                                                            echo_model: EchoModel) -> None:
    async with FakeSlack(users=NAMES) as slack:
        config = write_slack_config(tmp_path, slack, echo_model, extra=("media:", "  max_bytes: 4096"))
        sabha = SabhaProcess(config, env=slack_env())
        try:
            await sabha.start()
            memo = slack.add_file("memo.txt", b"The pricing memo says: raise prices by 8 percent in March.\n")
            big = slack.add_file("big.txt", b"x" * 10_000)
            async with slack_poster(sabha) as poster:
                doc = share(slack, memo, "DOC-Q040 thoughts on the memo?")
                assert await poster.deliver(doc)
                large = share(slack, big, "DOC-Q041 and this one?")
                assert await poster.deliver(large)
            doc_ts, large_ts = doc["event"]["ts"], large["event"]["ts"]  # type: ignore[index]
            await eventually(lambda: answer_in(slack, doc_ts, "DOC-Q040"), "the document's answer")
            asked = [str(m.get("content")) for body in echo_model.bodies for m in body.get("messages") or []
                     if m.get("role") == "user" and "DOC-Q040" in str(m.get("content"))]
            assert asked and "raise prices by 8 percent in March" in asked[-1], asked  # the file's text, quoted
            assert "memo.txt" in asked[-1]
            assert slack.downloads == [(memo.id, f"Bearer {slack.token}")]
            await eventually(lambda: answer_in(slack, large_ts, "DOC-Q041"), "the oversize file's answer")
            [told] = answer_in(slack, large_ts, "DOC-Q041")
            assert "big.txt" in told and "limit" in told and "4 KB" in told, told
            assert [f for f, _ in slack.downloads] == [memo.id], "the big file was refused before a byte moved"
        finally:
            await sabha.close()

"""Block Kit rendering of a reply's buttons: each button's value is the command a press sends, action ids are
unique, Ratify is primary and Veto danger, a long text is cut into sections Slack accepts (3000 characters),
and the pressed message keeps its text with a line instead of its buttons."""

from __future__ import annotations

from board.commands.decisions import decision_buttons
from board.envelope import Button, Reply
from bot.channels.slack.blocks import SECTION_CHARS, pressed_blocks, reply_blocks


def reply(buttons: tuple[Button, ...]) -> Reply:
    return Reply(role="general", name="General", emoji="🧭", text="x", channel="slack", chat_id="C1/1.2",
                 buttons=buttons)


def test_decision_buttons_as_block_kit() -> None:
    blocks = reply_blocks(reply(decision_buttons("m-1")), "*Board decision* on pricing")
    assert blocks is not None
    section, actions = blocks
    assert section == {"type": "section", "text": {"type": "mrkdwn", "text": "*Board decision* on pricing"}}
    elements = actions["elements"]
    assert [(e["text"]["text"], e["value"], e.get("style")) for e in elements] == [
        ("Ratify", "/ratify m-1", "primary"), ("Veto", "/veto m-1", "danger"), ("Revisit", "/revisit m-1", None)]
    assert len({e["action_id"] for e in elements}) == 3 and all(e["action_id"].startswith("sabha:") for e in elements)
    assert reply_blocks(reply(()), "no buttons") is None


def test_a_long_text_is_cut_at_lines_into_sections_and_a_pressed_message_keeps_it() -> None:
    text = "\n".join(f"line {i} " + " ".join(["word"] * 40) for i in range(60))
    blocks = reply_blocks(reply((Button("Done", "/done 3"),)), text)
    assert blocks is not None
    sections = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    assert len(sections) > 1 and all(len(s) <= SECTION_CHARS for s in sections)
    assert "\n".join(sections) == text
    pressed = pressed_blocks(text, "U1", "Done")
    assert [b["type"] for b in pressed][-1] == "context" and not any(b["type"] == "actions" for b in pressed)
    assert pressed[-1]["elements"][0]["text"] == "<@U1> pressed *Done*; the outcome follows in this thread."

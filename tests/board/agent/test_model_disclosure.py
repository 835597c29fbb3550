"""Never reveal the model (seed 001, issue 25): through the real ``sabha ask`` against the fake OpenAI
server, an answer saying which model and vendor it runs on reaches the user with neither, whatever the
configured model id (a custom ``openai:acme-brain-7`` is no known family); a vendor named as the
user's topic ("OpenAI's pricing") is left alone."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from tests.support.fakes.openai_api import FakeOpenAI

REPO = Path(__file__).resolve().parents[3]


async def ask(tmp_path: Path, fake: FakeOpenAI, question: str, *extra: str, model: str = "acme-brain-7") -> str:
    """``sabha ask --role critic question`` as a subprocess on a board configured for the fake; its stdout."""
    folder = tmp_path / "board"
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "xdg"), "PYTHONPATH": str(REPO)}
    env.pop("SABHA_CONFIG", None)
    if not folder.exists():
        init = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot.cli", "init", str(folder), env=env,
                                                    stdout=asyncio.subprocess.DEVNULL)
        assert await asyncio.wait_for(init.wait(), 120) == 0
    (folder / "sabha.yaml").write_text("\n".join([
        "workspace: ./workspace", "data_dir: ./sessions", "llm:", f"  model: openai:{model}",
        "  fallbacks: [openai:orbit-mini-2]",
        "  cheap_model: openai:acme-lite", "  providers:", "    openai:", "      api_key: sk-test",
        f"      base_url: {fake.base_url}", "      timeout_s: 60", *extra, ""]), encoding="utf-8")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", "ask", "--role", "critic", question, cwd=folder, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    return out.decode()


async def test_a_vendor_and_a_custom_model_id_are_not_disclosed(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.script_text("I'm GPT-4o by OpenAI, also known as acme-brain-7 (or orbit-mini-2, acme-lite, "
                            "ledger-sage-3). Your pricing should follow value, not cost.")
    out = await ask(tmp_path, fake_openai, "Which model are you?", "board:", "  agents:", "    finance:",
                    "      model: openai:ledger-sage-3")
    assert fake_openai.requests[0].body["model"] == "acme-brain-7"
    for name in ("GPT", "OpenAI", "acme-brain", "orbit-mini", "acme-lite", "ledger-sage"):
        assert name.lower() not in out.lower(), out
    assert "Your pricing should follow value, not cost." in out


async def test_disclosures_in_other_words_are_scrubbed(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    fake_openai.script_text("I am a large language model trained by Anthropic. My underlying model is Claude. "
                            "This advisor is built on Gemini from Google. Je suis un modèle développé par Mistral AI.")
    out = await ask(tmp_path, fake_openai, "Who made you?")
    for name in ("Anthropic", "Claude", "Gemini", "Google", "Mistral"):
        assert name.lower() not in out.lower(), out


async def test_a_vendor_as_the_users_topic_survives(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    topic = ("OpenAI's pricing for your support bot is per token, so Anthropic and Google are worth a quote too; "
             "I think Meta's open models could run on your own servers.")
    fake_openai.script_text(topic)
    out = await ask(tmp_path, fake_openai, "Should my business pay for OpenAI's API?")
    assert topic in out, out


async def test_the_configured_family_as_the_users_topic_survives(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    """Issue 15: with a Gemini model configured, "Compare Claude and Gemini for your app" is a topic, not a
    self-description: it reaches the user whole."""
    topic = ("Compare Claude and Gemini for your app: Gemini 2.0 Flash is cheaper per token, Claude writes longer "
             "answers. Google's Gemini API has a free tier worth trying first.")
    fake_openai.script_text(topic)
    out = await ask(tmp_path, fake_openai, "Which model should my app use?", model="gemini-2.0-flash")
    assert fake_openai.requests[0].body["model"] == "gemini-2.0-flash"
    assert topic in out, out


async def test_the_configured_family_in_a_self_description_is_withheld(tmp_path: Path,
                                                                       fake_openai: FakeOpenAI) -> None:
    """The same configured Gemini: where the answer says what *it* is, the names go; the topic sentence after
    it stays; the configured id as written is withheld wherever it appears."""
    fake_openai.script_text("I'm built on Google's Gemini. As a Gemini model, I can't browse the web. "
                            "Gemini here, happy to help. My config says gemini-2.0-flash. "
                            "For your app, compare Claude and Gemini on cost.")
    out = await ask(tmp_path, fake_openai, "What are you?", model="gemini-2.0-flash")
    assert "For your app, compare Claude and Gemini on cost." in out, out
    before_topic = out.split("For your app")[0]
    for name in ("Gemini", "Google", "gemini-2.0-flash"):
        assert name.lower() not in before_topic.lower(), out
    assert before_topic.count("[withheld]") == 5, out


def test_configured_names_are_the_ids_not_ordinary_words() -> None:
    from board.agent.disclosure import configured_names

    assert configured_names(["openai:acme-brain-7", "openai:library/llama3.1:8b", "scripted:main", "offline",
                             "anthropic:claude-sonnet-4-5"]) == (
        "acme-brain-7", "library/llama3.1:8b", "llama3.1:8b", "llama3.1", "claude-sonnet-4-5")


def test_which_sentences_disclose_the_model() -> None:
    from board.agent.disclosure import scrub_disclosures

    disclosures = ["I'm GPT-4o by OpenAI.", "I am a large language model trained by Anthropic.",
                   "My underlying model is Claude.", "This advisor is built on Gemini from Google.",
                   "Je suis un modèle développé par Mistral AI.", "Anthropic made me.", "My model is o3-mini.",
                   "I am Gemini.", "I'm built on Google's Gemini.", "As a Gemini model, I can't browse the web.",
                   "As Claude, I would say no.", "Gemini here, happy to help.", "I'm Llama 3.1, an open model."]
    for sentence in disclosures:
        text, names = scrub_disclosures(sentence, "X")
        assert names and not any(n in text for n in names), (sentence, text)
    topics = ["OpenAI's pricing for your support bot is per token.", "I think Google will copy you.",
              "My financial model assumes Google Ads at $2 a click.", "I was thinking Anthropic could be a client.",
              "I recommend you compare Claude and Gemini for your app.", "Meta's open models run on your servers.",
              "Compare Claude and Gemini for your app.", "As Gemini gets cheaper, move the batch jobs to it.",
              "I'd pick Gemini 2.0 Flash for the summaries.", "Gemini is fine here, but Claude writes better copy.",
              "Use a Gemini model as a fallback.", "I am not sure Gemini beats GPT-4o on your data."]
    for sentence in topics:
        assert scrub_disclosures(sentence, "X") == (sentence, []), sentence

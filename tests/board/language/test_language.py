# ruff: noqa: RUF001  (the labelled set is written in its own scripts)
"""Answer in the language the user writes in (seed 001, issue 25).

Through the real ``sabha ask`` against a fake OpenAI server that answers in the language the
per-turn block names: a French question gets a French answer, because the block said French;
USER.md's ``Language:`` wins over detection. And the detector over a labelled set of short
sentences, "unknown" on text too short to tell."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.fakes.openai_api import FakeOpenAI

REPO = Path(__file__).resolve().parents[3]

#: What the fake model says, in the language the per-turn block told it to use.
ANSWERS = {"French": "Notre trésorerie couvre environ neuf mois.",
           "English": "Our cash covers about nine months.",
           "German": "Unser Geld reicht etwa neun Monate."}


class LanguageAwareOpenAI(FakeOpenAI):
    """A fake model that reads the ``Reply in <language>`` line of the per-turn block it receives and
    answers in that language (English when the block names none: what an untold model does)."""

    told: list[str | None]

    async def next_reply(self):  # type: ignore[no-untyped-def]
        body = self.requests[-1].body or {}
        text = "\n".join(str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "user")
        block = text.rsplit("<turn_context>", 1)[-1] if "<turn_context>" in text else ""
        match = re.search(r"Reply in (\w+)", block)
        self.told.append(match.group(1) if match else None)
        return self.default_reply(ANSWERS.get(match.group(1) if match else "English", ANSWERS["English"]))


@pytest.fixture
async def model() -> AsyncIterator[LanguageAwareOpenAI]:
    async with LanguageAwareOpenAI() as server:
        server.told = []
        yield server


async def ask(tmp_path: Path, fake: FakeOpenAI, question: str, *, user_md: str | None = None,
              command: str = "ask", stdin: str | None = None) -> str:
    """``sabha ask question`` (or another ``command``) as a subprocess on a board configured for the
    fake; its stdout."""
    folder = tmp_path / "board"
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "xdg"), "PYTHONPATH": str(REPO)}
    env.pop("SABHA_CONFIG", None)
    if not folder.exists():
        init = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot.cli", "init", str(folder), env=env,
                                                    stdout=asyncio.subprocess.DEVNULL)
        assert await asyncio.wait_for(init.wait(), 120) == 0
    if user_md is not None:
        (folder / "workspace" / "USER.md").write_text(user_md, encoding="utf-8")
    (folder / "sabha.yaml").write_text("\n".join([
        "workspace: ./workspace", "data_dir: ./sessions", "llm:", "  model: openai:gpt-4o-mini",
        "  providers:", "    openai:", "      api_key: sk-test", f"      base_url: {fake.base_url}",
        "      timeout_s: 60", ""]), encoding="utf-8")
    args = [question] if question else []
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.cli", command, *args, cwd=folder, env=env, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin else b""), 120)
    assert proc.returncode == 0, err.decode()
    return out.decode()


async def test_a_french_question_is_answered_in_french(tmp_path: Path, model: LanguageAwareOpenAI) -> None:
    out = await ask(tmp_path, model, "Quelle est notre piste de trésorerie ?")
    assert model.told and model.told[0] == "French", model.told
    body = model.requests[0].body or {}
    sent = "\n".join(str(m.get("content")) for m in body["messages"])
    assert "Reply in French (the language of the user's message)" in sent
    assert ANSWERS["French"] in out, out


async def test_user_md_fixes_the_language(tmp_path: Path, model: LanguageAwareOpenAI) -> None:
    out = await ask(tmp_path, model, "Quelle est notre piste de trésorerie ?",
                    user_md="# The Director\nRuns a small bakery.\nLanguage: German\n")
    assert model.told == ["German"], model.told
    assert ANSWERS["German"] in out, out


async def test_a_short_reply_keeps_the_conversations_language(tmp_path: Path, model: LanguageAwareOpenAI) -> None:
    out = await ask(tmp_path, model, "", command="chat", stdin="Quelle est notre piste de trésorerie ?\nok\n")
    assert model.told == ["French", "French"], model.told
    sent = "\n".join(str(m.get("content")) for m in (model.requests[1].body or {})["messages"])
    assert "Reply in French (the language of this conversation so far)" in sent
    assert out.count(ANSWERS["French"]) == 2, out


async def test_a_meeting_asked_in_french_speaks_french(tmp_path: Path, model: LanguageAwareOpenAI) -> None:
    out = await ask(tmp_path, model, "Faut-il ouvrir une boutique à Lyon cette année ?", command="meeting")
    assert len(model.told) > 3 and set(model.told) == {"French"}, model.told
    sent = "\n".join(str(m.get("content")) for m in (model.requests[-1].body or {})["messages"])
    assert "Reply in French (the language the meeting was asked in)" in sent
    assert ANSWERS["French"] in out, out
    minutes = out.split("# Board meeting:", 1)[1]  # the minutes: fixed headings in English, the text in French
    assert ANSWERS["French"] in minutes, minutes


LABELLED: list[tuple[str, str]] = [
    ("What is our cash runway?", "English"),
    ("Should we raise prices next quarter?", "English"),
    ("Can you review the deck for the investors?", "English"),
    ("How many customers did we lose in March?", "English"),
    ("Quelle est notre piste de trésorerie ?", "French"),
    ("Faut-il augmenter nos prix le mois prochain ?", "French"),
    ("Pouvez-vous relire la présentation pour les investisseurs ?", "French"),
    ("Combien de clients avons-nous perdus en mars ?", "French"),
    ("Wie lange reicht unser Geld noch?", "German"),
    ("Sollten wir die Preise im nächsten Quartal erhöhen?", "German"),
    ("Kannst du bitte die Präsentation für die Investoren prüfen?", "German"),
    ("Wie viele Kunden haben wir im März verloren?", "German"),
    ("¿Cuánto dinero nos queda?", "Spanish"),
    ("¿Deberíamos subir los precios el próximo trimestre?", "Spanish"),
    ("¿Puedes revisar la presentación para los inversores?", "Spanish"),
    ("¿Cuántos clientes perdimos en marzo?", "Spanish"),
    ("Quanto tempo dura o nosso caixa?", "Portuguese"),
    ("Devemos aumentar os preços no próximo trimestre?", "Portuguese"),
    ("Você pode revisar a apresentação para os investidores?", "Portuguese"),
    ("Quantos clientes nós perdemos em março?", "Portuguese"),
    ("Quanto ci resta in cassa per quest'anno?", "Italian"),
    ("Dovremmo aumentare i prezzi il prossimo trimestre?", "Italian"),
    ("Puoi rivedere la presentazione per gli investitori?", "Italian"),
    ("Quanti clienti abbiamo perso a marzo?", "Italian"),
    ("Hoe lang kunnen we nog door met ons geld?", "Dutch"),
    ("Moeten we de prijzen volgend kwartaal verhogen?", "Dutch"),
    ("Kun je de presentatie voor de investeerders nakijken?", "Dutch"),
    ("Hoeveel klanten zijn we in maart kwijtgeraakt?", "Dutch"),
    ("हमारा नकद कितने महीने चलेगा?", "Hindi"),
    ("क्या हमें अगली तिमाही में दाम बढ़ाने चाहिए?", "Hindi"),
    ("كم لدينا من المال؟", "Arabic"),
    ("هل يجب أن نرفع الأسعار؟", "Arabic"),
    ("Сколько у нас денег?", "Russian"),
    ("Стоит ли нам поднять цены?", "Russian"),
    ("我们的现金还能撑多久？", "Chinese"),
    ("下个季度我们应该涨价吗？", "Chinese"),
    ("来期に値上げするべきですか？", "Japanese"),
    ("우리 현금은 얼마나 버틸 수 있나요?", "Korean"),
    # too short to tell: say so rather than guess
    ("ok", "unknown"),
    ("merci", "unknown"),
    ("yes", "unknown"),
    ("👍", "unknown"),
    ("Q3?", "unknown"),
]


def test_the_detector_on_a_labelled_set() -> None:
    from board.language.detect import detect_language

    wrong = [(text, want, got) for text, want in LABELLED if (got := detect_language(text)) != want]
    print(f"language detector: {len(LABELLED) - len(wrong)}/{len(LABELLED)} right")
    assert not wrong, wrong


def test_a_short_message_keeps_the_conversations_language() -> None:
    from board.language.detect import LanguageSource, choose_language

    choice = choose_language("ok", ["Quelle est notre piste de trésorerie ?", "merci"])
    assert choice is not None and (choice.language, choice.source) == ("French", LanguageSource.EARLIER)
    assert choose_language("ok") is None
    fixed = choose_language("Quelle est notre piste ?", fixed="English")
    assert fixed is not None and fixed.instruction == "Reply in English (as USER.md asks)"


def test_user_md_language_lines() -> None:
    from board.language.detect import language_in_user_md

    assert language_in_user_md("# Me\nLanguage: English\n") == "English"
    assert language_in_user_md("---\nlanguage: Français\n---\n# Me\n") == "Français"
    assert language_in_user_md("- **Language:** Hindi\n") == "Hindi"
    assert language_in_user_md("Language: auto\n") is None
    assert language_in_user_md("I speak several languages: English, Hindi.\n") is None
    assert language_in_user_md("- **Language:** Spanish (also English at work)\n") == "Spanish"
    assert language_in_user_md("- **Language:** auto (reply in the language I write in)\n") is None
    assert language_in_user_md("- **Language:** <auto, or e.g. English>\n") is None
    assert language_in_user_md("- **Time zone and language:** <e.g. Europe/Berlin, English>\n") is None

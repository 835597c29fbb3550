"""A board history for recall's tests, built deterministically through the board's own stores.

:func:`generate` makes the plan (no I/O): 200 meetings (a theme in a city each: "open an office in Pune"), 5,000
conversation messages (2,500 questions and answers, each pair about one product with a name of its own, spread
over the owner's chats, two members' chats and a group; 20 of the answers raise an idea, :data:`IDEAS`) and 20
documents (a supplier contract each). :func:`seed`
writes it through :class:`board.conversation.sessions.Sessions`, :class:`board.room.store.MeetingStore` and
:class:`board.media.store.MediaStore`. :func:`questions` are the labelled questions (``tests/data/
recall_questions.jsonl`` is their checked-in copy): exact-term ones, which name a term the source holds, and
paraphrased ones, which say the same with other words (a meeting's theme, a conversation's idea).
"""

from __future__ import annotations

import json
import random
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from board.agent.turn import user_entry
from board.conversation.sessions import Sessions
from board.conversation.transcripts import utc_now
from board.envelope import Envelope
from board.media.attachment import Attachment, MediaKind
from board.media.store import MediaStore
from board.recall.passages import Asker
from board.recall.service import RecallService
from board.room.store import MeetingStore

__all__ = ["IDEAS", "IDEA_CHATS", "QUESTIONS_FILE", "Chat", "History", "Meeting", "Scores", "generate", "hit",
           "labelled", "questions", "score", "seed", "write_questions"]

QUESTIONS_FILE = Path(__file__).resolve().parents[1] / "data" / "recall_questions.jsonl"

CITIES = ["Pune", "Lisbon", "Nairobi", "Osaka", "Bogota", "Tallinn", "Accra", "Hanoi", "Quito", "Bergen",
          "Cusco", "Dakar", "Tbilisi", "Krakow", "Medan", "Rosario", "Izmir", "Tamale", "Leipzig", "Fukuoka",
          "Mombasa", "Porto", "Kigali", "Cebu", "Oaxaca", "Gdansk", "Sendai", "Tartu", "Bilbao", "Arusha",
          "Kochi", "Valencia", "Durban", "Surabaya", "Cordoba", "Aarhus", "Bursa", "Malmo", "Cuenca", "Mysore"]
THEMES = [("office", "open an office in {c}", "workplace"),
          ("warehouse", "lease a warehouse near {c}", "storage depot"),
          ("hiring", "start hiring engineers in {c}", "recruiting"),
          ("pricing", "cut the pricing for customers in {c}", "price level"),
          ("partnership", "sign a distribution partnership in {c}", "alliance")]
ROLES = ["finance", "strategy", "research", "content", "critic"]
METRICS = [("churn", "customers leaving"), ("margin", "profit per sale"), ("backlog", "queued work"),
           ("refunds", "money returned"), ("latency", "response delay")]
#: Ideas raised in 20 of the conversations (those at ``IDEA_CHATS``), each with how a person might ask for it
#: later in other words: the paraphrased questions about conversations.
IDEAS = [("start a referral bonus", "reward people who recommend us"),
         ("move support to a chatbot", "let a bot answer help requests"),
         ("extend the free trial", "lengthen the gratis evaluation"),
         ("bundle onboarding with setup", "package welcome training and installation"),
         ("send a winback email", "mail lapsed buyers a comeback note"),
         ("add a yearly plan", "introduce annual billing"),
         ("raise the shipping fee", "increase the delivery charge"),
         ("hire a night shift", "staff an evening rota"),
         ("translate the app into Spanish", "localise the software for Hispanic users"),
         ("drop the paper invoices", "stop printed bills"),
         ("open a popup store", "run a temporary shop"),
         ("switch the courier to rail freight", "move carriage onto trains"),
         ("cap the free tier", "limit the gratis bracket"),
         ("publish a monthly newsletter", "put out a regular bulletin"),
         ("recycle the packaging", "reuse the boxes"),
         ("audit the supplier contracts", "review vendor agreements"),
         ("sponsor a football club", "back a soccer team"),
         ("automate the payroll", "mechanise salary runs"),
         ("add a dark mode", "offer a dim colour scheme"),
         ("cut the warranty period", "shorten the guarantee window")]
IDEA_CHATS = range(7, 7 + 125 * len(IDEAS), 125)
_SYL = ["ka", "lo", "mi", "ter", "vu", "zan", "pri", "dol", "sen", "ru", "bex", "ta", "nor", "qui", "fal", "gem"]
MEETINGS, PAIRS, DOCUMENTS = 200, 2500, 20


@dataclass(frozen=True)
class Meeting:
    """One ended meeting: its id, city and theme, who argued what, and the decision."""

    id: str
    city: str
    theme: str
    topic: str
    statements: tuple[tuple[int, str, str], ...]  # (round, role, text)
    recommendation: str
    dissenter: str


@dataclass(frozen=True)
class Chat:
    """One question and its answer: where (session key, role, who asked), the product and metric named."""

    key: str
    role: str
    channel: str
    sender: str
    is_owner: bool
    is_group: bool
    chat_id: str
    product: str
    metric: str
    question: str
    answer: str


@dataclass(frozen=True)
class History:
    """The whole plan."""

    meetings: tuple[Meeting, ...]
    chats: tuple[Chat, ...]
    documents: tuple[tuple[str, str, str], ...]  # (file name, vendor, text)
    extra: dict[str, Any] = field(default_factory=dict)


def _names(rng: random.Random, count: int) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < count:
        name = "".join(rng.choice(_SYL) for _ in range(3)).capitalize()
        if name not in seen:
            seen.add(name)
            out.append(name)
    return out


def generate(seed: int = 43) -> History:
    """The history for ``seed`` (the same every time)."""
    rng = random.Random(seed)
    meetings = []
    for n in range(MEETINGS):
        city, (theme, wording, _) = CITIES[n % len(CITIES)], THEMES[n // len(CITIES)]
        topic = wording.format(c=city)
        dissenter = rng.choice(ROLES)
        yes = [r for r in ROLES if r != dissenter][:3]
        statements = tuple([(1, r, f"I support the plan to {topic}: the numbers for {city} hold up.") for r in yes]
                           + [(2, dissenter, f"I disagree: to {topic} now is premature, {city} needs more study.")])
        meetings.append(Meeting(id=f"m-{n + 1:04d}", city=city, theme=theme, topic=topic, statements=statements,
                                recommendation=f"Go ahead and {topic} in the next quarter.", dissenter=dissenter))
    products = _names(rng, PAIRS + DOCUMENTS)
    places = [("main", "general", "telegram", "100", True, False, "100"),
              ("board:finance", "finance", "telegram", "100", True, False, "100"),
              ("board:strategy:tg-200", "strategy", "telegram", "200", False, False, "200"),
              ("board:finance:tg-300", "finance", "telegram", "300", False, False, "300"),
              ("board:research:g--1009", "research", "telegram", "300", False, True, "-1009")]
    chats = []
    ideas = dict(zip(IDEA_CHATS, (idea for idea, _ in IDEAS), strict=True))
    for n in range(PAIRS):
        key, role, channel, sender, owner, group, chat_id = places[n % len(places)]
        metric = METRICS[n % len(METRICS)][0]
        product = products[n]
        then = f"I suggest we {ideas[n]}." if n in ideas else "watch it next month."
        chats.append(Chat(key=key, role=role, channel=channel, sender=sender, is_owner=owner, is_group=group,
                          chat_id=chat_id, product=product, metric=metric,
                          question=f"How is {metric} looking for {product} this month?",
                          answer=f"For {product}, {metric} moved to {rng.randint(2, 40)}.{rng.randint(0, 9)}%; {then}"))
    documents = tuple((f"contract-{n + 1:02d}.pdf", products[PAIRS + n],
                       f"Supply agreement with {products[PAIRS + n]} Ltd: delivery within {n + 5} days, "
                       f"penalty {n + 1}% per late week.") for n in range(DOCUMENTS))
    return History(meetings=tuple(meetings), chats=tuple(chats), documents=documents)


async def seed(history: History, sessions: Sessions, meetings: MeetingStore, media: MediaStore) -> None:
    """Write ``history`` through the board's stores."""
    for m in history.meetings:
        await meetings.create(m.id, m.topic, "default", "general")
        for round_no, role, text in m.statements:
            await meetings.statement(m.id, round_no, role, text, model="scripted", cost_usd=0.0)
        await meetings.finish(m.id, stop_reason="completed", cost_usd=0.0,
                              decision={"recommendation": m.recommendation, "rationale": f"{m.city} is ready."},
                              minutes=f"Decided to {m.topic}. {m.dissenter} disagreed.")
    for c in history.chats:
        transcript = await sessions.open(c.key, c.role)
        envelope = Envelope(channel=c.channel, text=c.question, sender=c.sender, chat_id=c.chat_id,
                            is_owner=c.is_owner, is_group=c.is_group)
        transcript.append(user_entry(envelope, c.question),
                          {"type": "message", "ts": utc_now(), "role": "assistant", "text": c.answer})
    await sessions.transcripts.flush()
    for n, (name, _vendor, text) in enumerate(history.documents):
        attachment = Attachment(kind=MediaKind.DOCUMENT, name=name, mime="application/pdf", derived=text)
        await media.record(channel="telegram", chat_id="100", thread_id=None, message_id=f"doc-{n}", sender="100",
                           attachments=(attachment,))


def questions(history: History) -> list[dict[str, Any]]:
    """The labelled questions: ``kind`` exact or paraphrase, the question, and the source expected in the top 5
    (``cite``: a citation containing it; ``text``: a passage containing it)."""
    out: list[dict[str, Any]] = []
    for m in history.meetings[::5]:  # 40 meetings
        out.append({"kind": "exact", "question": f"What did we decide about the {m.theme} in {m.city}?",
                    "cite": m.id})
    for c in history.chats[::63][:30]:  # 30 conversations
        out.append({"kind": "exact", "question": f"What was the {c.metric} for {c.product}?", "text": c.product})
    for name, vendor, _ in history.documents[:10]:
        out.append({"kind": "exact", "question": f"What are the delivery terms with {vendor}?", "cite": name})
    for m in history.meetings[3::10]:  # 20 paraphrases: the theme said with other words
        synonym = next(s for t, _, s in THEMES if t == m.theme)
        out.append({"kind": "paraphrase", "question": f"Which session settled the {synonym} question for {m.city}?",
                    "cite": m.id})
    for n, (_idea, reworded) in zip(IDEA_CHATS, IDEAS, strict=True):  # 20 paraphrases: an idea, other words
        out.append({"kind": "paraphrase", "question": f"What was that idea to {reworded}?",
                    "text": history.chats[n].product})
    return out


def hit(question: dict[str, Any], cites: list[str], texts: list[str]) -> bool:
    """Whether the expected source is among the passages found (their citations and texts, in order)."""
    if "cite" in question:
        return any(question["cite"] in c for c in cites)
    return any(question["text"] in t for t in texts)


def write_questions(history: History, path: Path = QUESTIONS_FILE) -> None:
    """Write the labelled set (one JSON object a line); the test checks the file still matches."""
    path.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions(history)), encoding="utf-8")


def labelled(path: Path = QUESTIONS_FILE) -> list[dict[str, Any]]:
    """The checked-in labelled questions."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@dataclass(frozen=True)
class Scores:
    """recall@k of one service over labelled questions: hits per kind (``exact``, ``paraphrase``), the questions
    it missed, and the wall seconds each recall took."""

    hits: dict[str, list[bool]]
    missed: tuple[dict[str, Any], ...]
    took: tuple[float, ...]

    def recall(self, kind: str) -> float:
        """The share of ``kind``'s questions whose source was found."""
        found = self.hits.get(kind, [])
        return sum(found) / len(found) if found else 0.0

    def count(self, kind: str) -> int:
        return len(self.hits.get(kind, []))

    @property
    def median_ms(self) -> float:
        return statistics.median(self.took) * 1000 if self.took else 0.0


async def score(service: RecallService, asked: list[dict[str, Any]] | None = None, *, limit: int = 5,
                asker: Asker | None = None) -> Scores:
    """Ask ``service`` every labelled question (``asked``, default the checked-in set) as ``asker`` (default the
    owner, who may see everything) and score recall@``limit`` with :func:`hit`."""
    hits: dict[str, list[bool]] = {"exact": [], "paraphrase": []}
    missed: list[dict[str, Any]] = []
    took: list[float] = []
    who = asker or Asker.owner_view()
    for q in labelled() if asked is None else asked:
        start = time.perf_counter()
        found = await service.recall(q["question"], who, limit=limit)
        took.append(time.perf_counter() - start)
        ok = hit(q, [p.cite for p in found], [p.text for p in found])
        hits.setdefault(q["kind"], []).append(ok)
        if not ok:
            missed.append(q)
    return Scores(hits, tuple(missed), tuple(took))

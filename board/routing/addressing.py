"""Addressing by name in plain sentences: "What does the critic think about pricing?".

A role is addressed in plain text by its slug, name, title (each part of ``CEO / Chief
Strategist``) or emoji from the soul's front matter. Role names are often common words
("the *content* of the deck", "our *research* shows", "a *general* question"), so each
handle is one of two kinds:

- **strong**: a person's title or a word for a person (``CFO``, ``Devil's Advocate``,
  ``critic``): a mention counts unless it is indefinite (``a critic``, ``any CFO``), someone
  else's (``my harshest critic``, ``its first CMO``, ``the CFO of Apple``, ``the critic in me``,
  ``play devil's advocate``, ``the CFO role``, ``the critic who reviewed our app``), a report of
  what was said or done (``the critic said``, ``our CEO quit``) or the subject of a sentence
  followed by an aside (``The critic, however, loved it``), and a phrase that addresses someone
  wins over those;
- **weak**: every other single word (``finance``, ``research``, ``strategy``): a mention
  counts only in a phrase that addresses someone: "what does finance think", "ask
  research", "finance, ..." (with no article or possessive before it: not "The strategy, in
  short, ..."), "..., finance?", "finance's view", "que pense la finance", "was meint Finance
  zu", "finance kya sochta hai", and a few more. Verbs any noun takes ("what does finance
  *do*", "how would content *change*") ask a person word only ("what would the CMO do"), and
  "have/need/want X to ..." gives work to a person word, or to any handle as an order that opens
  the sentence ("Get finance to check ...", not "We need research to have a bigger budget");
- the person word that ends a longer title (``analyst`` of ``Research Analyst``, ``officer`` of
  ``Chief Technology Officer``) is a weak person word ("the analyst report" is no address, "have
  the analyst pull ..." is), and no one's when two titles end with it (``strategist`` of
  ``Revenue Strategist`` and ``Creative Strategist``).

A list of handles joined by "and"/"then" is one addressee phrase, decided by what follows the whole
list ("Finance and strategy: should we ...", not "Finance, marketing and ops all report to me").
A person's title is no one's when a word picks a kind before it ("Which CEO books", "the best CMO")
or a sentence says someone is it ("I'm the CEO"), and a thing of theirs is talked about, not to
("The critic's column"; "the critic's honest take" asks them). A handle then "," or ":" calls it
unless "that's ..." points back at the word ("Finance: that's the part I hate" is a heading).

A word close to a handle (same first five letters, accents folded: ``critique``,
``Kritiker``, ``Finanzen``, ``stratégie``) counts as a weak handle, for other languages'
phrasing. An emoji opens the message as a call; elsewhere it is a mention like a word. Each hit
carries a reason that says what matched, for the route and the logs.

A call may open any sentence of a message ("... in taxes. finance, how do i"); a bare name right before a request
in the second person speaks to it wherever it stands ("strategy i want you to ...", "critic tell me why"); a yes/no
question that opens a sentence asks a member ("does finance think ...", "does research have anything on ...");
an order that opens a sentence gives any work ("get content to come up with ..."); "what did X say" reports what
was said. An apostrophe may be left out ("devils advocate"). An emoji inside a sentence is read by the same phrases
as a title ("can 📣 write", "have the 🦉 look").

Round classify46 added, each a statement about how people call someone: a name typed with one slip (a letter dropped
or doubled, two neighbours swapped: "genral", "criitc"; not a letter put for another: "context" is no "content") is
a near word; greetings and honorifics before or after a name ("oye", "bro", "mr chair", "kindly content sir"); a
line break ends a sentence; "chair", "head", "lead" are words for a person; a bare name opening a sentence (or set off
by a comma) before an order with its object ("content write me ...", "..., strategy help us out"); something sent,
forwarded or run by a member ("send the P&L to finance and get it checked"); "thoughts finance?"; "I want research to
compare ..." (the speaker's want, not a need: "I need research to back up my claims" needs the thing); "need the
CMO's eyes / sign-off"; "strategy ur turn"; Hinglish "research ko bolo", a name before a clause ending in "kya"; a
name alone as the whole message ("finance?"); a question word before its verb ("critic where am i ..."); a roll call
of members at the start or after a colon that follows a word calling people, with or without commas ("everyone:
strategy, finance, critic — go"), and the next name after a called one ("chair, research and critic: ..."); every
emoji of the run that opens a message; asking whether a member is there ("is the critic around?"); a person word told
what it should do ("the critic should weigh in", not "my CFO should", not "should have known"); "be brutal".
Not a call: members offered as options in a question to someone else ("which of you ..., content or finance?"); a title
before a thing of its trade ("critic score", "critic reviews"); the speaker's own stance ("devil's advocate here, but
..."); an emoji beside a word for what it pictures, or opening a notice or news told in the third person with nothing
that asks or orders ("🦉 duolingo owl is ...", "📣 announcement: ...", "📣 new blog is live!"); the last item of a
heading's list ("Agenda: strategy, finance."). Hindi puts the object first ("research karo" is "do research"), so a
Hinglish call needs a clause of its own after the name.

The rules above are one half: :func:`mentions` lists every mention with the rules' reason, how they read it
(:class:`Reading`) and the features of its context, and :func:`find_addressed` decides with the learned model of
:mod:`board.routing.address_model` (``LinearModel.decide``): a phrase that speaks to the member (``PHRASE``) is
taken; a person's title with nothing around it either way (``DEFAULT``) only when the model does not score it
under its ``soft_veto`` ("our old cfo set up ..." is talked about); a mention a word makes someone else's
(``ELSEWHERE``: "a critic", "which CEO", "my CFO", "play devil's advocate", "the CFO said", "critic's choice") is
never taken; any other (``WORD``) when the model scores it a call (its reason then says "read as a call by the
learned model"). Rules tuned on one labelled set did not carry over to the next; the model, trained on every set,
adds the calls they miss and overrules the title defaults that are only talk (notes/answers3.md has the figures).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum

from board.language.learned import LinearModel
from board.routing.address_model import address_model, mention_features

__all__ = ["AddressHit", "Mention", "Reading", "Roster", "find_addressed", "mentions"]

_PERSON = re.compile(r"(?:ic|ist|yst|or|er|ant|ian|ee)$")
# words for a person whose ending says nothing of it: "I want the chair to decide", "what would the head do"
_PERSON_WORDS = {"chair", "chairperson", "chairman", "chairwoman", "head", "lead", "boss", "president", "host",
                 "coach", "captain", "guru", "chief"}
_WORD = re.compile(r"[^\W\d_][\w'\u2019-]*", re.UNICODE)
_INDEFINITE = re.compile(
    r"(?:^|\s)(?:a|an|any|another|every|no|some|each|un|une|ein|eine|einen|einem|kein|keine|una|uno)"
    r"\s+(?:[^\W\d_]+\s+)?$",  # "a critic", "a harsh critic"
    re.IGNORECASE)
# a word that picks a kind among many makes a title generic: "Which CEO books", "the best CMO you've heard of"
# (not "what the CFO thinks": no article may come between)
_KIND = re.compile(
    r"(?:^|\s)(?:which|whichever|what|whatever|best|worst|other|such|many|most|these|those|typical|average"
    r"|successful|famous|great|good)\s+(?:(?!(?:the|our|your|my)\s)[^\W\d_]+\s+)?$", re.IGNORECASE)
_ART = (r"(?:(?:the|our|your|my|le|la|les|l['\u2019]|du|de\s+la|de\s+l['\u2019]|au|à\s+la|a\s+la"
        r"|der|die|das|den|dem|unser|unsere|unseren|el|al|del)\s*)?")
_BEFORE = re.compile(
    r"(?:^|[\s,;.!?¿¡(])(?:"
    # English
    r"(?:hey|hi|hello|ok|okay|yo|dear|paging|cc|ask|asking|let|over\s+to|hear\s+from|"
    r"input\s+from|thoughts\s+from|opinion\s+of|consult|questions?\s+(?:is\s+|are\s+|['\u2019]s\s+)?for|"
    r"loop\s+in|hear|over\s+to\s+you,?)\s+" + _ART +
    # French
    r"|(?:qu['\u2019]en|que|qu['\u2019]est-ce\s+que)\s+(?:pense|penserait|dit|dirait|conseille|recommande)\s+" + _ART +
    r"|(?:l['\u2019]avis|l['\u2019]opinion|le\s+point\s+de\s+vue)\s+" + _ART +
    r"|demande[rz]?\s+" + _ART +
    r"|(?:salut|bonjour|hallo|hola|namaste)\s+" + _ART +
    # German
    r"|(?:was|wie)\s+(?:meint|denkt|sagt|hält|haelt|findet|rät|raet|sieht)\s+" + _ART +
    r"|frag(?:e|t)?\s+" + _ART +
    # Spanish
    r"|qu[eé]\s+(?:opina|piensa|dice|cree|recomienda)\s+" + _ART +
    r"|pregunta(?:le)?\s+(?:a\s+)?" + _ART +
    r")$",
    re.IGNORECASE)
_AFTER = re.compile(
    r"^(?:"
    r"['\u2019]s?\s+(?:[^\W\d_]+\s+)?(?:view|take|opinion|thoughts|perspective|advice|input|verdict|read|angle|position"
    r"|two\s+cents|2\s+cents)\b"
    r"|\s+(?:agent|advisor|adviser|bot|persona|seat)\b"
    r"|\s+(?:kya|ka|ki|ke)\s+(?:kya\s+)?(?:soch|keh|bol|raay|rai|ray|vichar|opinion|view|take|kehna|sujhav)"
    r"|\s+se\s+(?:poocho|puchho|pucho|puchh|poochho|poochiye|puchiye|pooch|puch)"
    r"|\s+(?:bhai|ji|sahab|sir|madam|ma['\u2019]?am|saab)\b"
    # handing the turn over: "strategy ur turn", "finance, your call"
    r"|\s*,?\s+(?:your|ur)\s+(?:turn|call|go|move|shot)\b"
    # Hinglish "tell X" / "ask X": "research ko bolo ki ...", "finance se poocho"
    r"|\s+ko\s+(?:bolo|bol|batao|bata|kaho|keh|samjhao|dikhao|pucho|poocho|puchho)"
    r")",
    re.IGNORECASE)
_OPINION_BEFORE = re.compile(
    r"(?:^|[\s,;.!?¿¡(])(?:what|how|why)\s+(?:does|do|would|will|might|could|should)\s+" + _ART + r"$",
    re.IGNORECASE)
_OPINION_AFTER = re.compile(
    r"^\s+(?:think|say|feel|suggest|recommend|reckon|make\s+of|propose|advise|see|want|have\s+to\s+say"
    r"|go\s+about|approach|tackle)\b",
    re.IGNORECASE)
# "what would strategy do" asks a member named bare for its choice; "what does finance do" asks what a thing is,
# "how would content change" how it is affected, "what would the strategy do" names a plan (an article: the thing)
_CHOICE_BEFORE = re.compile(r"(?:^|[\s,;.!?¿¡(])what\s+(?:would|should|might|could|will)\s+$", re.IGNORECASE)
_CHOICE_AFTER = re.compile(r"^\s+do\b", re.IGNORECASE)
_PERSON_CHOICE_BEFORE = re.compile(
    r"(?:^|[\s,;.!?¿¡(])(?:what|how)\s+(?:would|should|might|could|will)\s+" + _ART + r"$", re.IGNORECASE)
# after a modal and a person's title the next word is a verb ("How would the Chief Strategist position us"),
# unless it makes the title someone else's ("would the CFO of Apple")
_ANY_VERB = re.compile(r"^\s+(?!(?:of|at|from|in|on|for|role|roles|job|title)\b)[a-z]+\b")
# an embedded question asks for a view as the direct one does: "Let's hear what strategy thinks"
_EMBEDDED_BEFORE = re.compile(r"(?:^|[\s,;.!?])(?:what|how)\s+" + _ART + r"$", re.IGNORECASE)
_EMBEDDED_AFTER = re.compile(
    r"^\s+(?:thinks|reckons|feels\s+about|makes\s+of|would\s+(?:say|think|do|suggest|recommend))\b", re.IGNORECASE)
# a list of words joined by "and"/"or"/"then" is one addressee phrase: "Finance and strategy: should we",
# "Strategy, then critic: ...", and "Finance, marketing and ops all report to me" is the subject of a statement;
# what decides is the text after the whole list
# ("send it to finance and get it checked": a request after "and" is no list item); a list may also go without a
# joining word when every item names a member ("strategy, finance, critic — go")
_LIST = re.compile(r"^(?:(?:\s*,\s*[^\W\d_][\w'-]*)*\s*,?\s*(?:and|&|or|then|and\s+then)\s+"
                   r"(?!(?:ask|get|have|let|see|check|tell|make|find|confirm|request)\b)(?:the\s+)?"
                   r"[^\W\d_][\w'-]*)(?:\s+(?:both|all|too))?", re.IGNORECASE)
# a name set off by commas after a lead-in, then a question: "Tell me, strategy, what's the one thing"
_ENCLOSED_QUESTION = re.compile(r"^\s*,")
# Verbs any noun may take ("what does finance do in a startup", "how would content change"): asked of a person
# title only ("what would the CMO do with $500").
_DOING_AFTER = re.compile(
    r"^\s+(?:handle|attack|do|play|price|spend|change|fix|frame|pitch|rate|judge)\b", re.IGNORECASE)
_ELSEWHERE_BEFORE = re.compile(  # someone else's: "my harshest critic", "its first CMO", "play devil's advocate"
    r"(?:(?:^|\s)(?:my|his|her|their|its|whose|(?!(?:let|what|that|it|here|there|who|where|how|he|she|one)['\u2019])"
    r"[^\W\d_]+['\u2019]s)\s+(?:[^\W\d_-]+\s+){0,2}"
    r"|(?:^|\s)(?:play|plays|playing|played)\s+(?:the\s+)?"
    # saying someone is the title names whoever holds that job: "I'm the CEO", "she became our CFO"
    r"|(?:^|\s)(?:i['\u2019]m|i\s+am|i\s+was|he['\u2019]s|she['\u2019]s|(?:he|she)\s+(?:is|was)|became|becomes)"
    r"\s+(?:the\s+|our\s+|their\s+)?(?:[^\W\d_]+\s+)?)$",
    re.IGNORECASE)
_ELSEWHERE_AFTER = re.compile(  # "the CFO of Apple", "the critic in me", "the CFO role", "the critic said"
    # a thing of theirs ("The critic's column"): only "'s view/take ..." asks them, and that is an addressing
    # phrase (_AFTER), found first; a title before a word for a manner or a pay names a kind of thing ("the
    # devil's advocate approach", "CFO salaries")
    r"^(?:['\u2019]s\b|\s+(?:approach|mindset|style|stance|salary|salaries|pay"
    # what a critic, a CFO... turns out names a kind of thing: "critic score", "critic reviews", "CFO report"
    r"|scores?|ratings?|reviews|consensus|awards?|picks?|choice|reports?|circles?|community|circuit)\b"
    # the speaker naming the stance they speak from: "devil's advocate here, but ...", "CFO here: ..."
    r"|\s+here\s*(?:[,:;.!\u2014\u2013-]|but\b|and\b|$)"
    r"|\s+(?:of|at|from|for\s+(?:a|an|the)|in\s+(?:me|you|us|them|him|her)|inside|role|roles|position|job"
    r"|title|seat\s+at|who|whom|whose|which|that)\b"
    r"|\s+(?:already\s+|just\s+|also\s+)?(?:said|says|was|were|told|gave|wrote|quit|left|resigned|hated|loved"
    r"|mentioned|argued|warned|agreed|disagreed|replied|answered|called|keeps|kept|had|did)\b)",
    re.IGNORECASE)
_QUESTION_START = re.compile(  # with no mark before it, not a word that goes on with the sentence ("who reviewed")
    r"^(?!\s+(?:who|whom|whose|which|where|when|that|was|tell|give|any"
    r"|(?:can|could|would|should)\s+(?!you\b|we\b|i\b|u\b))\b)\s*[,:;!—\u2013-]?\s*(?:what|what's|how|why|when|where|who|which|can|could|would|should|do\s+you|please|tell|give|"
    r"any|thoughts|que|qu['\u2019]|comment|pourquoi|est-ce|was|wie|warum|kannst|kya|kaise|qué|que|cómo)\b",
    re.IGNORECASE)
# a greeting, an honorific or a plea before a name ("oye critic", "mr chair", "kindly content sir", "bro strategy")
_GREETING_WORDS = (r"(?:hey|hi|hello|ok|okay|yo|dear|so|and|oye|oi|arre|arey|bro|bhai|yaar|kindly|mr|mrs|ms|madam|sir"
                   r"|dude|acha|accha|achha)")
_GREETING = re.compile(r"^\s*(?:" + _GREETING_WORDS + r"\.?\s*,?\s*)*" + _ART + r"$", re.IGNORECASE)
# the same with no article or possessive: "Strategy — should we", not "The strategy, in short, is"
_BARE_GREETING = re.compile(r"^\s*(?:" + _GREETING_WORDS + r"\.?\s*,?\s*)*$", re.IGNORECASE)
# a title as the subject of a sentence, then an aside: "The critic, however, loved it", "Our CFO, Priya, wants"
_ASIDE = re.compile(r"^\s*[,:;\u2014\u2013]|^\s+-\s")
_RELATIVE = re.compile(r"^\s*,?\s*(?:who|whom|whose|which|that)\b", re.IGNORECASE)  # "Our CEO, who founded"
_SUBJECT_ART = re.compile(r"(?:^|[.!?;]\s+)\s*(?:the|our|my|your|their|his|her)\s+$", re.IGNORECASE)
_AND = re.compile(r"(?:^|\s|,)(?:and|&|or|et|und|y|aur|then|and\s+then|puis|dann|luego)\s+" + _ART + r"$",
                  re.IGNORECASE)
_TEAM_CALL = re.compile(r"^\s+(?:team|folks|people|guys|ji|bhai)\s*[,:!]", re.IGNORECASE)
_MODAL_START = re.compile(r"^\s*(?:can|could|would|will)\s+" + _ART + r"$", re.IGNORECASE)
_DOING = (r"(?:run|check|look|dig|draft|write|review|model|estimate|find|pull|prepare|give|tell|explain|weigh|"
    r"size|analy[sz]e|compare|summari[sz]e|crunch|calculate|forecast|assess|evaluate|suggest|recommend|plan|"
    r"propose|share|confirm|sanity-check|stress-test|poke|challenge|have|know|help|weigh\s+in|take|decide|"
    r"choose|pick|rewrite|roast|argue|put|sum|lay\s+out|outline|map|list|sketch|break\s+down|walk|"
    # reading something over is work too: "have the 🦉 go through my deck", "get finance to vet the contract"
    r"go\s+(?:through|over)|read|vet|audit|proofread|scan)\b")
# "can finance run the numbers", not "can content marketing work"
_MODAL_VERB = re.compile(r"^\s+(?:both\s+|all\s+|also\s+)?" + _DOING, re.IGNORECASE)
_TO_DOING = re.compile(r"^\s+(?:to\s+)?" + _DOING, re.IGNORECASE)  # "have research look into", "need finance to check"
_VOCATIVE_END = re.compile(r"^\s*[?!.…]*\s*$")
# not when "that" points back at the word itself: "Finance: that's the part I hate" is a heading, not a call
_CALL_MARK = re.compile(r"^\s*(?:[,:!]|\s[—\u2013-])\s*(?!that['\u2019]s\b|that\s+(?:is|was)\b)\S",
                        re.IGNORECASE)  # "chair, wrap this up", "Strategy — should we"
_HAVE_DO = re.compile(r"(?:^|[\s,;.!?])(?:have|get|let|make|need|want|like)\s+" + _ART + r"$", re.IGNORECASE)
# the same for any word, as an order that opens a sentence: "Get finance to check", not "We need research to have"
_HAVE_DO_OPENING = re.compile(
    r"(?:^|[.!?;]\s+)\s*(?:please\s+|let['\u2019]s\s+)?(?:have|get|let|make)\s+" + _ART + r"$",
                              re.IGNORECASE)


def _key(text: str) -> str:
    """A handle's text as looked up: lower case, apostrophes dropped ("devils advocate" is "devil's advocate")."""
    return text.lower().replace("\u2019", "").replace("'", "")
# an order that opens a sentence gives the named one any work: "get content to come up with blog topics"
_TO_ANY = re.compile(r"^\s+to\s+(?!be\b|have\b|get\b)[a-z]+", re.IGNORECASE)
# a yes/no question that opens a sentence asks the named one for a view or what it has: "does finance think we can
# afford it?", "does research have anything on churn" (not "did finance say ...": a report of what was said)
_YES_NO_BEFORE = re.compile(r"(?:^|[.!?;]\s+)\s*(?:(?:so|and|ok|okay|hey|also)\s*,?\s+)?"
                            r"(?:does|do|would|will|can|could)\s+" + _ART + r"$", re.IGNORECASE)
_HAS_ANYTHING = re.compile(r"^\s+(?:have|has|got)\s+(?:anything|any|something|an?\s+(?:view|opinion|take|read)"
                           r"|thoughts|views|data|numbers|ideas|concerns|objections)\b", re.IGNORECASE)
# a bare name right before a request in the second person speaks to it wherever it stands: "strategy i want you to
# think", "i dont know finance what do u think", "Chair pls moderate", "content yaar ..."
_REQUEST_AFTER = re.compile(
    r"^\s*,?\s+(?:(?:tell|give|show)\s+(?:me|us)\b|i\s+(?:need|want)\s+(?:u|you)\b|(?:what\s+)?do\s+(?:u|you)\s+think"
    r"|(?:u|you)\s+(?:there|around)\b)", re.IGNORECASE)
_CLAUSE_START = re.compile(r"(?<=[.!?])\s+|\s*\n\s*")  # a line break ends a sentence as a full stop does
# at the start of a sentence a plea or a request may follow too: "Chair pls moderate", "content yaar ...", "research
# can you check" (in the middle, "more research please" or "the content can you" is talk about the thing)
_OPENING_REQUEST = re.compile(r"^\s*,?\s+(?:i\s+(?:need|want)|help\s+me|quick\s+(?:one|q|question)|pls|plz|please|yaar"
                              r"|(?:can|could|would|will)\s+(?:u|you))\b", re.IGNORECASE)
# E. a bare name opening a sentence (or set off by a comma) then an order in the second person: "content write me a
# post", "general help pls", "..., strategy help us out here", "critic roast my copy"; the order's object or a plea
# must follow ("content plan for Q3" is a thing; "strategy help desk" no order)
_ORDER_VERB = (r"(?:help|write|draft|make|roast|check|review|tell|give|find|explain|suggest|compare|summari[sz]e|"
               r"break|look|sort|fix|think|weigh|decide|pick|settle|rate|rank|judge|tear|poke|critique|rewrite|edit|"
               r"proofread|brainstorm|list|pull|dig|crunch|run|do|share|send|prepare|plan|map|outline|sketch|create|"
               r"come|jump|chime|step)")
_ORDER_AFTER = re.compile(
    r"^\s*,?\s+(?:pls\s+|plz\s+|please\s+|just\s+|quickly\s+|now\s+)?(?:" + _ORDER_VERB + r"\s+"
    r"(?:me|us|my|our|this|that|it|these|those|out|in|up|pls|please|plz|apart|holes|a|an|some|one|into|on|through"
    r"|with)\b"
    # an order about manner is given to a person: "critic be brutal", "content be creative"
    r"|be\s+(?:honest|brutal|harsh|real|straight|blunt|frank|critical|nice|kind|quick|specific|concise|creative"
    r"|careful|bold|realistic)\b)|^\s*,?\s+help\s*(?:pls|please|plz|me|us|!|\?|$)", re.IGNORECASE)
# G. something passed to a member by a verb of sending speaks to it: "forward this to the chair and ask him",
# "send the P&L to finance and get it checked", "run this by finance before we commit"; the member ends the clause
# or a request follows ("to research and development" is a department)
_SENT_BEFORE = re.compile(
    r"\b(?:forward|fwd|send|pass|hand|escalate|route|refer)\b[^.?!\n]{0,60}?\bto\s+" + _ART + r"$"
    r"|\b(?:run|bounce)\b[^.?!\n]{0,60}?\b(?:by|past|off)\s+" + _ART + r"$", re.IGNORECASE)
# ("take a week to research." is a verb: taking, bringing or showing something is done to a person word only:
# "take this to the chair", "show the deck to the CFO")
_SENT_PERSON_BEFORE = re.compile(r"\b(?:take|bring|show)\b[^.?!\n]{0,60}?\bto\s+" + _ART + r"$", re.IGNORECASE)
_SENT_AFTER = re.compile(
    r"^\s*(?:[.!?,:;\u2014\u2013]|$|\s+-\s|\s+(?:and|&)\s+(?:ask|get|have|let|see|check|tell|make|find|confirm|"
    r"request)\b|\s+(?:before|first|pls|please|plz|asap|now|too|so\s+(?:that|they|it|he|she)|for\s+(?:a|an|their|"
    r"his|her|its|the)\s+(?:review|check|look|sign-?off|view|opinion|take|input|approval)|once)\b)", re.IGNORECASE)
# H. a request word, then the name closing the question: "thoughts finance?", "views, critic?", "ideas research?"
_THOUGHTS_BEFORE = re.compile(r"(?:^|[\s,;.!?])(?:thoughts|views|opinions?|ideas|inputs?|suggestions?|comments?|"
                              r"feedback)\s*[,:-]?\s*" + _ART + r"$", re.IGNORECASE)
# J. a person's attention or approval asked for: "need the CMO's eyes on this", "can I get finance's sign-off" (not
# "the critic's review was unfair": a thing of theirs talked about)
_WANT_BEFORE = re.compile(r"(?:^|[\s,;.!?])(?:need|want|get|use|request|requesting|seeking|asking\s+for"
                          r"|wanna)\s+" + _ART + r"$", re.IGNORECASE)
_THEIR_ATTENTION = re.compile(r"^['\u2019]s?\s+(?:eyes|help|review|feedback|sign-?off|approval|blessing|go-?ahead|ok"
                              r"|okay|input|inputs|attention|signature)\b", re.IGNORECASE)
# I. the speaker asking for a member's work: "i want research to compare ...", "I'd like finance to check ..." (not
# "we need research to have a bigger budget": no work; not "the X to be ...")
# ("I need research to back up my claims" needs the thing: a need is no order)
_SPEAKER_WANTS = re.compile(r"(?:^|[\s,;.!?])i\s*(?:want|would\s+like|['\u2019]d\s+like|wanna|would\s+love"
                            r"|['\u2019]d\s+love)\s+" + _ART + r"$", re.IGNORECASE)
# (a word takes a verb of work: "I want content to feel warmer" wants a thing; a person word any verb but being)
_TO_WORK = re.compile(r"^\s+to\s+(?!(?:have|know|take|put|help)\b)" + _DOING, re.IGNORECASE)
_TO_ANY_VERB = re.compile(r"^\s+to\s+(?!(?:be|have|get|know|stay|become)\b)[a-z]+", re.IGNORECASE)
# T. members offered as options in a question put to someone else: "which of you should handle it, content or
# finance?" names candidates, it calls neither
_OPTIONS_BEFORE = re.compile(r"\b(?:which|whether|whom|who|either)\b[^.?!\n]*$", re.IGNORECASE)
# the last item of a list of words after a heading's colon is an item, not a call: "Agenda: strategy, finance."
_HEADING_LIST = re.compile(r":\s*(?:[^\W\d_][\w'-]*\s*,\s*)+$")
# a person word told what it should do is given the work: "The critic should weigh in on ...", "Our CFO should check
# the burn rate" (a verb of work: "the CFO should have known" judges, "the content should explain" is a thing's; not
# someone else's: "my CFO should check")
_OBLIGED_AFTER = re.compile(r"^\s+(?:should|must|needs?\s+to|has\s+to|have\s+to|ought\s+to)\s+(?:also\s+|both\s+|"
                            r"all\s+|really\s+|probably\s+|definitely\s+)?(?!(?:have|know|take|put|help)\b)" + _DOING,
                            re.IGNORECASE)
# asking whether a member is there calls it: "is the critic around?", "is finance free?"
_PRESENT_BEFORE = re.compile(r"(?:^|[.!?;]\s+)\s*(?:(?:hey|so|ok|okay|yo)\s*,?\s+)?(?:is|are)\s+" + _ART + r"$",
                             re.IGNORECASE)
_PRESENT_AFTER = re.compile(r"^\s+(?:around|there|here|free|available|online|awake|up|in)\s*\?", re.IGNORECASE)
# a question word then a verb before its subject is a question, not a clause about the name: "critic where am i
# being naive", "strategy which is better" ("the critic who reviewed it" has no such verb)
_INVERTED_QUESTION = re.compile(
    r"^\s*[,:;!\u2014\u2013-]?\s*(?:(?:where|when|whats|wats|wat)\s+(?:am|is|are|was|were|do|does|did|should|would"
    r"|could|can|will|shall|have|has)|(?:who|which)\s+(?:do|does|did))\b", re.IGNORECASE)
# a Hinglish question or request ends its sentence with the asking word: "arre finance yeh budget theek hai kya",
# "content ek caption likh do"
# (Hindi puts the object first: "research karo" is "do research", "koi strategy batao" "tell me a strategy"; so the
# name must be followed by a clause with a subject of its own, and the sentence end in a question word)
_HINDI_QUESTION_END = re.compile(r"\b(?:kya|kyu|kyun|kaise|kab|kaun|kitna|kitni)\s*\??\s*$", re.IGNORECASE)
_HINDI_OWN_SUBJECT = re.compile(r"^\s*,?\s+(?:yeh|ye|is|iska|iski|aap|tum|tu|hum|mera|meri|mere|apna|ab|bhai|ji"
                                r"|yaar|hamara|hamari|hamare)\b", re.IGNORECASE)
_ARTICLE_BEFORE = re.compile(r"(?:^|\s)(?:the|a|an|our|my|your|their|his|her|its|this|that|of|about|on|in|for)\s*$",
                             re.IGNORECASE)


# an emoji that opens a notice's heading decorates it: "📣 announcement: office closed", "🧭 update - ..."
_HEADING = re.compile(r"^\s*(?:announcement|announcing|update|reminder|notice|news|fyi|psa|alert|breaking|note|tip"
                      r"|poll|quote|throwback|flashback|mood|status)\b\s*[:\u2014\u2013!-]", re.IGNORECASE)
# the words that separate emoji called together at the start: "💰📣 budget and copy", "♟️ and 🔬 — ..."
_EMOJI_JOIN = re.compile(r"^[\s,&+/]*(?:and\s+|aur\s+)?", re.IGNORECASE)


# what speaks to someone after an opening emoji: a question, a plea, a need, "you", an order first ("🦉 be brutal",
# "📣 make this sound less robotic: 'We are pleased ...'", "💰 runway check pls"); else a sentence that tells news in
# the third person ("📣 new blog is live!", "🔬 lab results came back normal") only decorates
_SPEAKS_TO = re.compile(r"\?|\b(?:pls|please|plz|need|needs|want|help|you|u|your|ur|thoughts|ideas|suggestions|kya"
                        r"|batao|asap)\b|(?:^|[:;.!\u2014\u2013])\W*(?:what|whats|how|why|should|can|could|would|is|are|do|does|did|any|which"
                        r"|who|where|when|will|shall)\b", re.IGNORECASE)
_ORDER_FIRST = re.compile(r"^\W*(?:" + _ORDER_VERB + r"|be|get|show|rip|draft|dig|poke|roast|tear|review|run|pull"
                          r"|summari[sz]e|estimate|model|size|analy[sz]e)\b", re.IGNORECASE)
_FINITE_STATEMENT = re.compile(r"\b(?:is|are|was|were|has|had|came|went|got|lost|won|arrived|broke|left|\w{3,}ed)\b",
                               re.IGNORECASE)


#: Words of an emoji's Unicode name that say nothing of what it pictures ("BLACK CHESS PAWN": a chess pawn).
_NAME_FILLERS = {"black", "white", "with", "sign", "symbol", "face", "heavy", "small", "large", "medium", "light",
                 "dark", "and", "of", "the", "emoji", "selector"}


def _decorates(text: str, start: int, end: int) -> bool:
    """Whether the emoji at ``text[start:end]`` pictures something its own sentence names, or opens a notice or news
    told in the third person with nothing that speaks to someone, and so decorates it instead of calling a member:
    "🦉 duolingo owl is threatening me" (the owl it pictures), "📣 announcement: office closed on monday", "📣 new blog
    is live!"."""
    emoji = text[start:end].replace("\ufe0f", "")
    try:
        nouns = [w for w in unicodedata.name(emoji[0]).lower().split() if w not in _NAME_FILLERS]
    except (ValueError, IndexError):
        return False
    sentence = re.split(r"[.!?\n]", text[end:], maxsplit=1)[0]
    before = re.split(r"[.!?\n]", text[:start])[-1]
    opening = not before.strip()
    if opening and (_SPEAKS_TO.search(text[end:]) or _ORDER_FIRST.match(text[end:])):
        return False  # "💰 how much money do we need?" asks, whatever it names
    if any(re.search(rf"\b{re.escape(noun)}s?\b", before + " " + sentence, re.IGNORECASE) for noun in nouns):
        return True
    return opening and (bool(_HEADING.match(_EMOJI_JOIN.sub("", sentence.replace("\ufe0f", "")))) or bool(
        _FINITE_STATEMENT.search(sentence)))


def _fold(word: str) -> str:
    """Lower case, accents off, ``k`` as ``c`` (``Kritiker`` near ``critic``)."""
    plain = unicodedata.normalize("NFKD", word.lower())
    return "".join(c for c in plain if not unicodedata.combining(c)).replace("k", "c").replace("\u2019", "'")


_OWNED = re.compile(r"\b(?:my|your|his|her|their|our|its|a|an|the|this|that)$", re.IGNORECASE)
_OWNED_LONGEST = 5  # letters of the longest word _OWNED names ("their")


def _owned(before: str) -> bool:
    """Whether ``before`` (the text before a word) ends with a possessive or an article and white space ("ask my "):
    only that last word is searched. Searching the whole text before every word read a 4,000-character message
    ~300 times over (24 ms on the event loop, inside a WhatsApp webhook's acknowledgement)."""
    word = before.rstrip()
    # one character more than the longest word, so ``\b`` sees what stands before it ("bathe" is not "the")
    return len(word) < len(before) and _OWNED.search(word[-(_OWNED_LONGEST + 1):]) is not None


def _slip(word: str, name: str) -> bool:
    """Whether ``word`` is ``name`` typed with one slip of the fingers: a letter dropped or doubled, or two
    neighbours swapped ("genral", "criitc", "finnance"). A letter put for another is not one: "context" is a word
    of its own, not "content"; the first letter must stand."""
    if word == name or word[:1] != name[:1]:
        return False
    if len(word) == len(name):
        diff = [i for i, (a, b) in enumerate(zip(word, name, strict=True)) if a != b]
        return len(diff) == 2 and diff[1] == diff[0] + 1 and word[diff[0]] == name[diff[1]] and \
            word[diff[1]] == name[diff[0]]
    short, long_ = sorted((word, name), key=len)
    if len(long_) - len(short) != 1:
        return False
    return any(long_[:i] + long_[i + 1:] == short for i in range(len(long_)))


@dataclass(frozen=True)
class _Handle:
    text: str  # lower case
    role: str
    strong: bool
    source: str  # "name", "title", "slug"
    person: bool = True  # a word for a person: may be given something to do ("I want the analyst to find ...")


@dataclass(frozen=True)
class AddressHit:
    """A role addressed in plain text: where and why."""

    role: str
    start: int
    reason: str


class Roster:
    """The handles of every role: slugs, names, titles and emoji."""

    def __init__(self, roles: Iterable[str], names: Mapping[str, str], titles: Mapping[str, str],
                 emoji: Mapping[str, str]) -> None:
        handles: dict[str, _Handle] = {}
        derived: dict[str, set[str]] = {}
        for role in roles:
            words = [(role, "slug"), (names.get(role, ""), "name")]
            parts = [part.strip() for part in re.split(r"\s*(?:/|&|,|\band\b)\s*", titles.get(role, ""))]
            words += [(part, "title") for part in parts]
            for part in parts:  # the person word that ends a longer title: "analyst" of "Research Analyst"
                if " " in part and _PERSON.search(part.split()[-1].lower()) and "'" not in part:
                    derived.setdefault(part.split()[-1].lower(), set()).add(role)
            for word, source in words:
                text = word.strip().lower().removeprefix("the ").replace("\u2019", "'")
                if len(text) < 2 or text in handles:
                    continue
                strong = " " in text or word.strip().isupper() or bool(_PERSON.search(text))
                handles[text] = _Handle(text, role, strong, source,
                                        strong or bool(_PERSON.search(text)) or text in _PERSON_WORDS)
        # alone it is an ordinary word ("the analyst report", "our compliance officer"), weak; and no one's
        # when two titles end with it ("Revenue Strategist", "Creative Strategist")
        for text, owners in derived.items():
            if len(owners) == 1 and text not in handles:
                handles[text] = _Handle(text, next(iter(owners)), False, "title", True)
        self.handles = sorted(handles.values(), key=lambda h: -len(h.text))
        self.emoji = {e.strip(): r for r, e in emoji.items() if e.strip() and r in set(roles)}
        self._exact = re.compile(
            r"(?<![\w@/])(" + "|".join(re.escape(h.text).replace("'", "['\u2019]?") for h in self.handles)
            + r")(?:['\u2019]s)?(?!\w)",
            re.IGNORECASE) if self.handles else None
        self._by_text = {_key(h.text): h for h in self.handles}
        self._fuzzy = {_fold(h.text): h for h in self.handles if " " not in h.text and len(h.text) >= 5}

    def _near(self, word: str, before: str = "") -> _Handle | None:
        folded = _fold(word)
        if len(folded) < 5:
            return None
        for key, handle in self._fuzzy.items():
            if folded[:5] == key[:5] and abs(len(folded) - len(key)) <= 3 and folded != key:
                return handle
        if _owned(before):
            return None  # a slip is a name typed in haste; after "my" or "the" it is a word: "ask my fiance"
        for key, handle in self._fuzzy.items():
            if _slip(folded, key):
                return handle
        return None

    def all_members(self, words: str) -> bool:
        """Whether every word of a list after a handle (", marketing and ops") names a member too."""
        items = [w for w in _WORD.findall(words)
                 if w.lower() not in {"and", "or", "then", "the", "both", "all", "too"}]
        return all(_key(w) in self._by_text or self._near(w) is not None for w in items)

    def is_member(self, word: str) -> bool:
        """Whether one word names a member (exactly or as a near word)."""
        return _key(word) in self._by_text or self._near(word) is not None

    def handle_of(self, word: str, role: str) -> _Handle:
        """The handle ``word`` matched (exactly or as a near word) for ``role``."""
        exact = self._by_text.get(_key(word))
        if exact is not None:
            return exact
        near = self._near(word)
        return near if near is not None else _Handle(word.lower(), role, False, "name", False)

    def mentions(self, text: str) -> list[tuple[_Handle, int, int, bool]]:
        """Every handle in ``text``: (handle, start, end, exact)."""
        found: list[tuple[_Handle, int, int, bool]] = []
        taken: set[int] = set()
        if self._exact is not None:
            for m in self._exact.finditer(text):
                handle = self._by_text[_key(m.group(1))]
                found.append((handle, m.start(1), m.end(1), True))
                taken.update(range(m.start(), m.end()))
        for m in _WORD.finditer(text):
            if m.start() in taken:
                continue
            near = self._near(m.group(0), text[:m.start()])
            if near is not None:
                found.append((near, m.start(), m.end(), False))
        return sorted(found, key=lambda f: f[1])


class Reading(Enum):
    """What the pattern rules made of a mention."""

    PHRASE = "phrase"  # a phrase speaks to it ("ask the CFO", "finance, ...")
    DEFAULT = "default"  # a person's title with nothing around it either way: a yes the learned model may overrule
    ELSEWHERE = "elsewhere"  # a word that makes it no one here ("a critic", "which CEO", "my CFO", "the CFO said")
    WORD = "word"  # only a word, nothing says more: the learned model may still read a call


def _addressed(roster: Roster, text: str, handle: _Handle, start: int, end: int,
               exact: bool) -> tuple[str | None, Reading]:
    """Why this mention addresses its role (None when it is only a word), and how the rules read it."""
    before, after = text[:start], text[end:]
    word = text[start:end]
    strong = exact and handle.strong
    if strong and (_INDEFINITE.search(before) or _KIND.search(before)):
        return None, Reading.ELSEWHERE
    listed = _LIST.match(after) or _members_run(roster, after)
    rest = after[listed.end():] if listed else after
    if listed and not roster.all_members(listed.group(0)):
        # one item of a list of topics ("Strategy and execution: which matters more?"): no call
        reason = None
    elif listed and re.search(r"\bor\b", listed.group(0), re.IGNORECASE) and _OPTIONS_BEFORE.search(before):
        return None, Reading.ELSEWHERE  # "which of you should handle it, content or finance?": candidates
    elif listed and (_BARE_GREETING.match(before) or _CALLED_ALL.search(before)) and (
            _CALL_MARK.match(rest) or _QUESTION_START.match(rest) or re.match(r"\s*\?", rest)):
        # a roll call of members, at the start or after a colon: "i need everyone on this: strategy, finance,
        # critic — go"
        return f"{word!r} called in a list of members", Reading.PHRASE
    else:
        reason = _spoken_to(before, after[listed.end():] if listed else after, word, exact and handle.person)
    if reason is not None:
        return reason, Reading.PHRASE
    if _INDEFINITE.search(before) or _KIND.search(before) or _ELSEWHERE_BEFORE.search(before) or \
            _ELSEWHERE_AFTER.match(after) or (_SUBJECT_ART.search(before) and _ASIDE.match(after)):
        return None, Reading.ELSEWHERE
    if not strong:
        return None, Reading.WORD
    return f"{handle.source} {word!r} ({'a title' if handle.source == 'title' else 'names a person'})", \
        Reading.DEFAULT


# a roll call after a colon follows a word that calls people: "i need everyone on this: strategy, finance, critic"
# ("Topics: strategy, finance" is a heading's list)
_CALLED_ALL = re.compile(r"\b(?:everyone|everybody|all|team|folks|guys|people|board|you|y['\u2019]?all|both|up|this|on"
                         r"|here)\s*:\s*$", re.IGNORECASE)
_NEXT_WORD = re.compile(r"(?:\s*,\s*|\s+)([^\W\d_][\w'-]*)")


def _members_run(roster: Roster, after: str) -> re.Match[str] | None:
    """The members named one after another with no joining word, by commas or spaces alone, right after a name
    ("strategy finance critic - everyone weigh in", "strategy, finance, critic — go"): every word of it names a
    member, else None."""
    end = 0
    while (found := _NEXT_WORD.match(after, end)) is not None and roster.is_member(found.group(1)):
        end = found.end()
    return re.compile(r"[\s\S]*").match(after, 0, end) if end else None


def _spoken_to(before: str, after: str, word: str, person: bool) -> str | None:
    """Why the words around ``word`` (a word for a person when ``person``: a title, "critic", "analyst") speak
    to it (a phrase that addresses someone), or None."""
    if _OPINION_BEFORE.search(before) and (_OPINION_AFTER.match(after) or (person and _DOING_AFTER.match(after))):
        return f"{word!r} asked for an opinion"
    if (_CHOICE_BEFORE.search(before) and _CHOICE_AFTER.match(after)) or (
            person and _PERSON_CHOICE_BEFORE.search(before) and _ANY_VERB.match(after)):
        return f"{word!r} asked what it would do"
    if _EMBEDDED_BEFORE.search(before) and _EMBEDDED_AFTER.match(after):
        return f"{word!r} asked for a view"
    if before.rstrip().endswith(",") and _ENCLOSED_QUESTION.match(after) and _QUESTION_START.match(after):
        return f"{word!r} called between commas"
    if _BEFORE.search(before):
        return f"{word!r} after {before.strip().split()[-1]!r}" if before.strip() else f"{word!r} at the start"
    if _AFTER.match(after):
        return f"{word!r} before {after.strip().split()[0]!r}"
    # a call with a question or a request may open any sentence: "... in taxes. finance, how do i" (a name and a
    # comma alone only the message: "Thanks. Strategy, in short, is about choices" is a statement)
    clause = _CLAUSE_START.split(before)[-1]
    if (_GREETING.match(clause) and _QUESTION_START.match(after) and not (
            _SUBJECT_ART.search(clause) and _RELATIVE.match(after))) or (_BARE_GREETING.match(before)
                                                                        and _CALL_MARK.match(after)):
        return f"{word!r} opens a question"
    if person and _OBLIGED_AFTER.match(after) and not _ELSEWHERE_BEFORE.search(before):
        return f"{word!r} told what it should do"
    if _PRESENT_BEFORE.search(before) and _PRESENT_AFTER.match(after):
        return f"{word!r} asked whether it is there"
    if _BARE_GREETING.match(before) and re.fullmatch(r"\s*[?!.…]+\s*", after):
        return f"{word!r} is the whole message"  # "finance?", "critic!!"
    if _BARE_GREETING.match(clause) and _HINDI_OWN_SUBJECT.match(after) and _HINDI_QUESTION_END.search(
            re.split(r"[.!\n]", after, maxsplit=1)[0]):
        return f"{word!r} opens a question"
    if _BARE_GREETING.match(clause) and _INVERTED_QUESTION.match(after):
        return f"{word!r} opens a question"
    if _BARE_GREETING.match(clause) and _TEAM_CALL.match(after):
        return f"{word!r} called at the start"
    if (_BARE_GREETING.match(clause) and _OPENING_REQUEST.match(after)) or (
            _REQUEST_AFTER.match(after) and not _ARTICLE_BEFORE.search(before)):
        return f"{word!r} called before a request"
    if _YES_NO_BEFORE.search(before) and (_OPINION_AFTER.match(after) or _HAS_ANYTHING.match(after)):
        return f"{word!r} asked for a view"
    if _HAVE_DO_OPENING.search(before) and _TO_ANY.match(after):
        return f"{word!r} given something to do"
    if _MODAL_START.match(before) and _MODAL_VERB.match(after):
        return f"{word!r} asked to do something"
    if (_HAVE_DO_OPENING.search(before) or (person and _HAVE_DO.search(before))) and _TO_DOING.match(after):
        return f"{word!r} given something to do"
    if before.rstrip().endswith(",") and _VOCATIVE_END.match(after) and not _HEADING_LIST.search(before):
        return f"{word!r} ends the message after a comma"
    if (_BARE_GREETING.match(clause) or before.rstrip().endswith(",")) and _ORDER_AFTER.match(after):
        return f"{word!r} given an order"
    if (_SENT_BEFORE.search(before) or (person and _SENT_PERSON_BEFORE.search(before))) and _SENT_AFTER.match(after):
        return f"{word!r} sent something"
    if _THOUGHTS_BEFORE.search(before) and _VOCATIVE_END.match(after):
        return f"{word!r} asked for thoughts"
    if _WANT_BEFORE.search(before) and _THEIR_ATTENTION.match(after):
        return f"{word!r} asked for their attention"
    if _SPEAKER_WANTS.search(before) and (_TO_WORK.match(after) or (person and _TO_ANY_VERB.match(after))):
        return f"{word!r} given something to do"
    return None


@dataclass(frozen=True)
class Mention:
    """One mention of a role in a text, with the pattern rules' reason (None: they read no address) and the
    features the learned model scores (:mod:`board.routing.address_model`)."""

    role: str
    start: int
    word: str
    rule: str | None
    features: tuple[str, ...]
    reading: Reading = Reading.WORD


_CALL_ENDS = re.compile(r"^\s*(?:[,:?!]|[\u2014\u2013-]\s|$)")


def _list_goes_on(roster: Roster, after: str) -> bool:
    """After a name in a list with no commas: another name, or the mark that ends the call ("strategy finance critic
    - weigh in"; in "ask critic research questions" a topic follows the call)."""
    following = _NEXT_WORD.match(after)
    return bool(_CALL_ENDS.match(after)) or (following is not None and roster.is_member(following.group(1)))


def mentions(roster: Roster, text: str, hits: Mapping[str, object] | None = None) -> Iterator[Mention]:
    """Every mention of a role in ``text`` (an emoji anywhere too), in order, with the rules' reason; ``hits``:
    the roles taken as addressed so far, as the caller decides (a mention after "and" then reads as named
    alongside them); without it, the roles the rules took."""
    ruled: dict[str, object] = {}
    earlier: Mapping[str, object] = hits if hits is not None else ruled
    found: list[tuple[int, int, str, str | None, dict[str, object]]] = []
    last: tuple[str, int] | None = None  # the previous mention: its role and where it ended
    for emoji, role in roster.emoji.items():
        for m in re.finditer(re.escape(emoji.replace("\ufe0f", "")), text.replace("\ufe0f", " ")):
            found.append((m.start(), m.end(), role, "emoji",
                          {"strong": True, "person": True, "exact": True, "source": "emoji"}))
    for handle, start, end, exact in roster.mentions(text):
        found.append((start, end, handle.role, "",
                      {"strong": exact and handle.strong, "person": handle.person, "exact": exact,
                       "source": handle.source}))
    for start, end, role, rule, kind in sorted(found, key=lambda f: f[0]):
        reading = Reading.WORD
        if rule == "emoji" and _decorates(text, start, end):
            rule, reading = None, Reading.ELSEWHERE
        elif rule == "emoji":  # an emoji in a phrase that speaks to someone: "can 📣 write", "have the 🦉 look"
            rule = _spoken_to(text[:start], text[end:], text[start:end], True)
            reading = Reading.WORD if rule is None else Reading.PHRASE
        elif rule is not None:
            handle = roster.handle_of(text[start:end], role)
            rule, reading = _addressed(roster, text, handle, start, end, bool(kind["exact"]))
            if rule is None and earlier and _AND.search(text[:start]):
                rule, reading = f"{text[start:end]!r} named alongside {next(iter(earlier))}", Reading.DEFAULT
            elif rule is None and last is not None and last[0] in earlier and reading is not Reading.ELSEWHERE and (
                    re.fullmatch(r"\s*,\s*(?:the\s+)?", text[last[1]:start], re.IGNORECASE) or (
                    text[last[1]:start].isspace() and _list_goes_on(roster, text[end:]))):
                # the next name of a list a call opened: "chair, research and critic: quick round"
                rule, reading = f"{text[start:end]!r} named after {last[0]} in one call", Reading.PHRASE
            if rule is not None:
                ruled.setdefault(role, rule)
        last = (role, end)
        yield Mention(role, start, text[start:end], rule, tuple(mention_features(
            text, start, end, strong=bool(kind["strong"]), person=bool(kind["person"]), exact=bool(kind["exact"]),
            source=str(kind["source"]))), reading)


def find_addressed(roster: Roster, text: str, model: LinearModel | None = None) -> list[AddressHit]:
    """The roles ``text`` addresses in plain words, in order of first mention, each with its reason: an emoji
    opening the message, else each mention the rules take or the learned model scores a call
    (:meth:`LinearModel.decide`; ``model``: the shipped one unless given)."""
    model = model or address_model()
    hits: dict[str, AddressHit] = {}
    stripped = text.lstrip().replace("\ufe0f", "")  # "♟" and "♟️" alike
    opening = True
    while opening:  # every emoji of the run that opens the message: "💰📣 budget and copy", "♟️ and 🔬 — ..."
        opening = False
        for emoji, role in roster.emoji.items():
            plain = emoji.replace("\ufe0f", "")
            if stripped.startswith(plain):
                if not _decorates(stripped, 0, len(plain)):
                    hits.setdefault(role, AddressHit(role, 0, f"the emoji {emoji} opens the message"))
                rest = stripped[len(plain):]
                joined = _EMOJI_JOIN.sub("", rest, count=1)
                stripped = joined if any(joined.startswith(e.replace("\ufe0f", "")) for e in roster.emoji) else rest
                opening = stripped != rest or any(stripped.startswith(e.replace("\ufe0f", "")) for e in roster.emoji)
                break
    for mention in mentions(roster, text, hits):
        if mention.role in hits:
            continue
        score = model.probability(mention.features)
        if mention.reading is Reading.ELSEWHERE:
            continue  # "play devil's advocate", "the critic's choice award": the rules' no is not overruled
        if model.decide(score, mention.rule is not None, soft=mention.reading is Reading.DEFAULT):
            reason = mention.rule or f"{mention.word!r} read as a call by the learned model"
            hits[mention.role] = AddressHit(mention.role, mention.start, f"{reason} (model {score:.2f})")
    return sorted(hits.values(), key=lambda h: h.start)

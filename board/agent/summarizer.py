"""How a compaction summary is asked for: on the role's own cached prefix, else on its own.

A compaction (:mod:`board.agent.compaction`) asks for the window's first messages to be folded into
the summary so far (a :class:`SummaryAsk`). The request takes one of two forms:

- **on the turn's prefix** (:func:`ask_on_prefix`, when the summariser's model is the role's own):
  the request repeats what the role's turns send, byte for byte: the same tools (offered, none run:
  :attr:`ToolPolicy.offer_only`, with ``tool_choice`` auto as in a turn, because Anthropic keys its
  cached message blocks on ``tool_choice``), the same system blocks (the static block, then the
  current summary), the history window up to the message being answered with a cache breakpoint on
  its last user message (where the previous turn put its last one), and then, last, the instruction
  naming how many of the messages above to fold in. The provider reads nearly all of it from the
  cache the previous turn wrote: what is fresh is the previous answer and the instruction.
- **on its own** (:func:`ask_on_its_own`: a cheaper summariser model, ``llm.cheap_model``, whose
  cache the turns never wrote; or the first form ended in a tool call): a short system prompt and
  the messages to fold in as plain lines.

Both ask for the same messages to be summarised, with the same rules and the same word limit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from board.agent.compaction import SUMMARY_HEADING, SummaryAsk
from board.agent.exchange import ExchangeRequest, ModelChoice, ToolPolicy
from board.agent.tools import ToolContext
from board.llm.base import ChatMessage, PromptBlock
from board.llm.purpose import CallPurpose
from board.workspace.souls import AgentProfile

__all__ = ["SUMMARIZER_SYSTEM", "SUMMARY_RULES", "SummaryModel", "ask_on_its_own", "ask_on_prefix", "instruction"]

#: What every summary keeps, and its form (both request forms say it).
SUMMARY_RULES = (
    "Keep facts, numbers, decisions, commitments, open questions and the Director's stated preferences; drop "
    "pleasantries. Plain text, third person, at most {words} words."
)

#: The system prompt of a summary asked on its own.
SUMMARIZER_SYSTEM = (
    "You keep the running memory of a conversation between the Director and {name}, an advisor on a board. "
    "Write an updated summary that folds the new messages into the previous summary. " + SUMMARY_RULES
)


@dataclass(frozen=True)
class SummaryModel:
    """The model a summary is asked of and its output limit (``llm.context.summary_max_tokens``)."""

    model: str
    max_tokens: int

    @property
    def words(self) -> int:
        """The summary's word limit, said in the instruction."""
        return max(50, int(self.max_tokens * 0.7))


def instruction(ask: SummaryAsk, shown: int, words: int) -> str:
    """The last message of a summary asked on the turn's prefix: which of the ``shown`` messages above
    to fold in (the first ``ask.folded``) and which to leave out (the rest, kept as they are)."""
    kept = shown - ask.folded
    into = (f"into the summary so far (under \"{SUMMARY_HEADING.lstrip('# ')}\" above)" if ask.previous
            else "into a new summary")
    rest = (f" The {kept} message{'s' if kept != 1 else ''} after them stay in the conversation as they are: "
            "leave them out of the summary." if kept > 0 else "")
    return (
        f"You keep the running memory of this conversation between the Director and {ask.agent_name}, an advisor "
        f"on a board. Write an updated summary that folds the first {ask.folded} message"
        f"{'s' if ask.folded != 1 else ''} above {into}.{rest} " + SUMMARY_RULES.format(words=words) +
        " Do not call a tool and do not answer the conversation: reply with the summary alone."
    )


def ask_on_prefix(ask: SummaryAsk, history: Sequence[ChatMessage], *, profile: AgentProfile, ctx: ToolContext,
                  system: tuple[PromptBlock, ...], model: SummaryModel) -> ExchangeRequest | None:
    """The summary asked on the role's cached prefix: ``system`` (the role's system blocks, as its turns
    send them), ``history`` (the window's messages before the one being answered, as the turns send them),
    then the :func:`instruction`. None when ``history`` does not hold the messages to fold in."""
    users = [i for i, m in enumerate(history) if m.role == "user"]
    if len(history) < ask.folded or ask.folded <= 0 or not users:
        return None
    messages = list(history)
    messages[users[-1]] = replace(messages[users[-1]], cache_point=True)  # the previous turn's last breakpoint
    messages.append(ChatMessage(role="user", content=instruction(ask, len(history), model.words)))
    return ExchangeRequest(
        profile=profile, ctx=ctx, prompt=tuple(messages), system=system, purpose=CallPurpose.COMPACTION,
        tools=ToolPolicy(max_rounds=0, offer_only=True),
        model=ModelChoice(model=model.model, max_tokens=model.max_tokens),
    )


def ask_on_its_own(ask: SummaryAsk, *, profile: AgentProfile, ctx: ToolContext,
                   model: SummaryModel) -> ExchangeRequest:
    """The summary asked without the role's prefix: a summariser's system prompt, the previous summary
    and the messages to fold in as plain lines, no tools."""
    system = (PromptBlock("summarizer", SUMMARIZER_SYSTEM.format(name=profile.name, words=model.words)),)
    body = (f"Previous summary:\n{ask.previous}\n\n" if ask.previous else "") + \
        f"New messages to fold in:\n{ask.conversation}\n\nWrite the updated summary."
    return ExchangeRequest(
        profile=profile, ctx=ctx, prompt=body, system=system, purpose=CallPurpose.COMPACTION,
        tools=ToolPolicy(allowed=(), max_rounds=0),
        model=ModelChoice(model=model.model, max_tokens=model.max_tokens),
    )

"""The stages that run once, before the first model call.

Owns ``resolve_model`` (the model chain and the deadline; builds the state),
``lay_out_prompt`` (system blocks and messages), ``select_tools`` (the registry, the
permitted tools and how they are offered), ``choose_thinking`` (how much the model thinks
first) and ``attribute_prompt`` (tokens per prompt block,
for the ledger). :data:`PREPARE` is their order after ``resolve_model``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any

from board.agent.exchange.deps import ExchangeDeps
from board.agent.exchange.request import ExchangeRequest
from board.agent.exchange.state import ExchangeState
from board.llm import text_tools
from board.llm.base import ChatMessage, PromptBlock, Thinking
from board.llm.resilience import model_chain
from board.llm.tokens import TokenCounter, counter_for
from board.workspace.prompt import DYNAMIC_BLOCK, BuiltPrompt, lay_out

__all__ = [
    "PREPARE",
    "Prepare",
    "attribute_prompt",
    "choose_thinking",
    "lay_out_prompt",
    "prompt_attribution",
    "resolve_model",
    "select_tools",
]

#: A stage that runs once and writes the fields of the state its docstring names.
Prepare = Callable[[ExchangeRequest, ExchangeState, ExchangeDeps], Awaitable[None]]


def resolve_model(req: ExchangeRequest, deps: ExchangeDeps) -> ExchangeState:
    """The state of a new run: the model and its fallback chain, its token counter, the deadline
    (the context's, else ``llm.turn_timeout_s`` from now) and the tool registry."""
    policy = deps.policy
    model = req.model.model or policy.model_for(req.profile)
    fallbacks = policy.fallbacks if req.model.fallbacks is None else req.model.fallbacks
    deadline = req.ctx.deadline
    if deadline is None and policy.turn_timeout_s:
        deadline = asyncio.get_running_loop().time() + policy.turn_timeout_s
    return ExchangeState(started=deps.clock(), model=model, chain=tuple(model_chain(model, fallbacks)),
                         counter=counter_for(model), deadline=deadline, registry=deps.tools, model_used=model)


async def lay_out_prompt(req: ExchangeRequest, st: ExchangeState, deps: ExchangeDeps) -> None:
    """Writes ``blocks`` and ``messages``. A one-question prompt gets the role's own system block
    (so the cached prefix is shared with its chats) and the per-turn block after the question."""
    prompt = req.prompt
    if isinstance(prompt, BuiltPrompt):
        st.blocks = req.system if req.system is not None else prompt.blocks
        st.messages = list(prompt.laid_out())
        return
    if req.system is not None:
        st.blocks = tuple(b for b in req.system if b.name != DYNAMIC_BLOCK)
        dynamic = "\n".join(b.text for b in req.system if b.name == DYNAMIC_BLOCK)
    else:
        st.blocks = deps.prompts.system_for(req.profile, req.ctx)
        dynamic = deps.prompts.context_for(req.ctx, await deps.memory.recall(req.ctx))
    asked = [ChatMessage(role="user", content=prompt)] if isinstance(prompt, str) else list(prompt)
    st.messages = list(lay_out(asked, dynamic, rolling=False))


async def select_tools(req: ExchangeRequest, st: ExchangeState, deps: ExchangeDeps) -> None:
    """Writes ``registry``, ``allowed``, ``specs``, ``max_rounds``, ``text_mode`` (and, for a model on
    the text protocol, appends the tool instructions to ``blocks``)."""
    policy = req.tools
    extra = policy.extra
    if policy.max_rounds != 0 or policy.offer_only:  # the role's outside (MCP) tools, as their servers list them
        own = {e.spec.name for e in extra}
        extra = (*extra, *(t for t in deps.outside.tools_for(req.ctx) if t.spec.name not in own))
    st.registry = deps.tools.merged(extra)
    allowed = list(policy.allowed) if policy.allowed is not None else \
        list(deps.policy.allowed_tools(req.profile, deps.tools))
    allowed += [t.spec.name for t in extra if t.spec.name not in allowed]
    st.allowed = allowed
    st.specs = st.registry.specs(allowed)
    st.max_rounds = 0 if policy.offer_only else \
        deps.policy.max_tool_iterations if policy.max_rounds is None else policy.max_rounds
    st.text_mode = bool(st.specs) and deps.policy.uses_text_protocol(st.model)
    if st.text_mode:
        st.blocks = (*st.blocks, PromptBlock("tools", text_tools.instructions(st.specs), cacheable=False))


async def attribute_prompt(req: ExchangeRequest, st: ExchangeState, deps: ExchangeDeps) -> None:
    """Writes ``attribution`` (tokens per block, recorded with every model call) and
    ``first_loop_message`` (where the tool loop's own messages start)."""
    st.attribution = prompt_attribution(st.blocks, st.messages, () if st.text_mode else st.specs, st.counter,
                                        req.profile.soul.text)
    st.first_loop_message = len(st.messages)


async def choose_thinking(req: ExchangeRequest, st: ExchangeState, deps: ExchangeDeps) -> None:
    """Writes ``thinking``: the exchange's own level, else the role's (soul front matter or
    ``board.agents.<role>.thinking``), else ``llm.thinking``."""
    st.thinking = Thinking(req.model.thinking or req.profile.thinking or deps.policy.thinking)


PREPARE: tuple[Prepare, ...] = (lay_out_prompt, select_tools, choose_thinking, attribute_prompt)


#: A tool schema's tokens by (counter, name, description, its parameters' object), with that object: a tool's
#: schema is the same object turn after turn, and dumping every schema to JSON each model call was a turn's cost.
_SCHEMA_TOKENS: dict[tuple[str, str, str, int], tuple[object, int]] = {}


def _schema_tokens(tool: Any, counter: TokenCounter) -> int:
    """The tokens of ``tool``'s name, description and parameters' JSON (counted once per schema object)."""
    key = (counter.method, tool.name, tool.description, id(tool.parameters))
    held = _SCHEMA_TOKENS.get(key)
    if held is not None and held[0] is tool.parameters:
        return held[1]
    tokens = counter.count(json.dumps(tool.parameters)) + counter.count(tool.name + tool.description)
    if len(_SCHEMA_TOKENS) >= 1024:
        _SCHEMA_TOKENS.clear()
    _SCHEMA_TOKENS[key] = (tool.parameters, tokens)
    return tokens


def prompt_attribution(
    system: Sequence[PromptBlock],
    messages: Sequence[ChatMessage],
    tools: Sequence[Any],
    counter: TokenCounter,
    soul: str,
) -> dict[str, Any]:
    """Tokens per prompt block (seed 001 §10.2): static, soul, summary, history, message, dynamic
    (the per-turn context after the conversation), tools; and ``cacheable_prefix``, the tokens
    before the last cache breakpoint (tool schemas, the system prompt and, with a rolling
    breakpoint, the conversation up to the new message)."""
    blocks: dict[str, Any] = {}
    for block in system:
        blocks[block.name] = blocks.get(block.name, 0) + counter.count(block.text)
    if "static" in blocks and soul and soul.strip() in next((b.text for b in system if b.name == "static"), ""):
        soul_tokens = min(blocks["static"], counter.count(soul.strip()))
        blocks["soul"] = soul_tokens
        blocks["static"] -= soul_tokens
    plain = [replace(m, context="") if m.context else m for m in messages]
    last_user = max((i for i, m in enumerate(plain) if m.role == "user"), default=None)
    history = plain[:last_user] if last_user is not None else plain
    blocks["history"] = counter.count_messages(history)
    blocks["message"] = counter.count_messages(plain[last_user:]) if last_user is not None else 0
    blocks["dynamic"] = blocks.get("dynamic", 0) + sum(counter.count(m.context) for m in messages if m.context)
    if tools:
        blocks["tools"] = sum(_schema_tokens(t, counter) for t in tools)
    # Tool schemas precede the system prompt in the provider's cache prefix and are just as stable.
    last_point = max((i for i, m in enumerate(plain) if m.cache_point), default=None)
    if last_point is not None:
        prefix = sum(counter.count(b.text) for b in system) + counter.count_messages(plain[: last_point + 1])
    else:
        prefix = sum(counter.count(b.text) for b in _cacheable_prefix(system))
    blocks["cacheable_prefix"] = blocks.get("tools", 0) + prefix
    blocks["method"] = counter.method
    return blocks


def _cacheable_prefix(system: Sequence[PromptBlock]) -> list[PromptBlock]:
    prefix = []
    for block in system:
        if not block.cacheable:
            break
        prefix.append(block)
    return prefix

"""Google Gemini (``google:<model>``, also written ``gemini:<model>``) as an :class:`LLMProvider`.

Through Google's official ``google-genai`` SDK (``client.aio.models.generate_content``, the
Gemini Developer API's ``models/{model}:generateContent``). The system prompt goes out as
``system_instruction`` (static block first, then the compaction summary); the history as
``contents`` (``user`` / ``model`` turns; a tool call is a ``functionCall`` part, its answer a
``functionResponse`` part); the per-turn context (:attr:`~board.llm.base.ChatMessage.context`)
after the new message's text (its pictures are ``inline_data`` parts before the text), so
everything before it is the byte-stable prefix Gemini's implicit caching reuses
(``usageMetadata.cachedContentTokenCount`` is reported as cache reads).
Tools are sent as ``functionDeclarations`` with their JSON schema as ``parametersJsonSchema``;
the SDK's automatic function calling is off (Sabha's tool loop runs the tools).

``llm.providers.google.stream: true`` streams (``streamGenerateContent``; the time to the first
token is recorded). ``llm.providers.google.base_url`` points the SDK at another endpoint (a test fake). The SDK's
own retries are off (one attempt): :mod:`board.llm.resilience` decides about retries and
fallbacks. Thinking tokens (``thoughtsTokenCount``) are billed as output, as Google bills them.

Thinking (a role's ``thinking:``) goes out as ``thinking_config.thinking_budget``: low, medium and
high as :data:`~board.llm.base.THINKING_BUDGETS` tokens, added to ``max_output_tokens`` since
Gemini's thoughts draw on the answer's allowance; off (or unset) as 0 on the models that may skip
thinking (Gemini 2.5 Flash and Flash-Lite, which otherwise think by default and can spend a short
answer's whole allowance), and left out on the others (2.5 Pro refuses 0; older models do not
think). With a budget, ``include_thoughts`` asks for the thought summaries, as Anthropic returns its
thinking: they are never part of the answer, and reach the transcript only with ``llm.keep_thinking``.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import time
from dataclasses import dataclass, replace
from typing import Any

import aiohttp
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

from board.llm.base import THINKING_BUDGETS, ChatMessage, LLMRequest, LLMResponse, ToolCall, Usage
from board.llm.errors import bad_response_error
from board.llm.sdk_provider import SDKErrors, SDKProvider, preview
from board.llm.stream import emit

__all__ = ["GeminiProvider", "thinking_config", "to_gemini_contents", "to_gemini_tools"]


@dataclass(frozen=True)
class GeminiClient:
    """The SDK's async client, closable the way :class:`SDKProvider` closes clients."""

    aio: Any  # google.genai.client.AsyncClient

    async def close(self) -> None:
        """Close the SDK's HTTP sessions."""
        await self.aio.aclose()


def to_gemini_contents(request: LLMRequest) -> list[dict[str, Any]]:
    """The request's messages as ``contents`` (the system prompt goes apart, as ``system_instruction``)."""
    names: dict[str, str] = {}  # tool call id -> tool name: a functionResponse names its function
    out: list[dict[str, Any]] = []
    for message in request.messages:
        for call in message.tool_calls:
            names[call.id] = call.name
        content = _content(message, names)
        if out and out[-1]["role"] == content["role"] == "user" and message.role == "tool":
            out[-1]["parts"].extend(content["parts"])  # parallel calls' answers: one user turn
        else:
            out.append(content)
    return out


def _content(message: ChatMessage, names: dict[str, str]) -> dict[str, Any]:
    if message.role == "tool":
        call_id = message.tool_call_id or ""
        answer = {"id": call_id, "name": names.get(call_id, "tool"), "response": {"result": message.content}}
        return {"role": "user", "parts": [{"function_response": answer}]}
    if message.role == "assistant":
        parts: list[dict[str, Any]] = [{"text": message.content}] if message.content else []
        parts += [{"function_call": {"id": c.id, "name": c.name, "args": c.arguments}} for c in message.tool_calls]
        return {"role": "model", "parts": parts or [{"text": ""}]}
    text = f"{message.content}\n\n{message.context}" if message.context else message.content
    pictures = [{"inline_data": {"mime_type": i.mime, "data": i.data}} for i in message.images]  # before the words
    return {"role": "user", "parts": [*pictures, {"text": text}]}


def to_gemini_tools(request: LLMRequest) -> list[genai_types.Tool]:
    """Tool specs as one Gemini tool of ``functionDeclarations`` (the JSON schema as it is)."""
    if not request.tools:
        return []
    return [genai_types.Tool(function_declarations=[
        genai_types.FunctionDeclaration(name=t.name, description=t.description, parameters_json_schema=t.parameters)
        for t in request.tools
    ])]


#: The models that may be told not to think at all (``thinking_budget: 0``).
_MAY_SKIP_THINKING = re.compile(r"gemini-2\.5-flash")


def thinking_config(request: LLMRequest, model: str) -> genai_types.ThinkingConfig | None:
    """The ``thinking_config`` for the request's thinking level on ``model``; None: send none."""
    budget = THINKING_BUDGETS.get(request.thinking) if request.thinking else None
    if budget:
        return genai_types.ThinkingConfig(thinking_budget=budget, include_thoughts=True)  # as Anthropic returns them
    return genai_types.ThinkingConfig(thinking_budget=0) if _MAY_SKIP_THINKING.search(model) else None


def _usage(raw: Any) -> Usage:
    if raw is None:
        return Usage()
    prompt = int(getattr(raw, "prompt_token_count", 0) or 0)
    cached = min(int(getattr(raw, "cached_content_token_count", 0) or 0), prompt)
    output = int(getattr(raw, "candidates_token_count", 0) or 0) + int(getattr(raw, "thoughts_token_count", 0) or 0)
    return Usage(input_tokens=prompt - cached, output_tokens=output, cache_read_tokens=cached)


#: The reason, and the words, of Gemini's 400 for a wrong API key.
_KEY_INVALID = "API key not valid"

_STOP_REASONS = {"STOP": "end_turn", "MAX_TOKENS": "max_tokens"}


def _stop_reason(finish: Any, calls: bool) -> str:
    if calls:
        return "tool_use"
    name = str(getattr(finish, "value", finish) or "STOP")
    return _STOP_REASONS.get(name, name.lower())


class GeminiProvider(SDKProvider[GeminiClient]):
    """Gemini ``generateContent`` with tools over the official SDK; see the module docstring."""

    name = "google"
    title = "Google Gemini"
    default_key_env = "GOOGLE_API_KEY"
    errors = SDKErrors(
        timeout=(asyncio.TimeoutError, aiohttp.ServerTimeoutError),
        connection=aiohttp.ClientConnectionError,
        status=genai_errors.APIError,
        api=genai_errors.APIError,
        base=genai_errors.APIError,
    )

    def _make_client(self, api_key: str) -> GeminiClient:
        # One attempt: with no retry_options the SDK retries a refused or dropped connection once
        # itself, after sleeping 1 to 10 s; resilience decides about retries instead.
        options = genai_types.HttpOptions(
            base_url=self.settings.base_url or None, timeout=int(self.settings.timeout_s * 1000),
            retry_options=genai_types.HttpRetryOptions(attempts=1),
        )
        return GeminiClient(genai.Client(vertexai=False, api_key=api_key, http_options=options).aio)

    def _params(self, request: LLMRequest, model: str) -> dict[str, Any]:
        config: dict[str, Any] = {"max_output_tokens": request.max_tokens}
        if request.system_text:
            config["system_instruction"] = request.system_text
        if request.temperature is not None:
            config["temperature"] = request.temperature
        thinking = thinking_config(request, model)
        if thinking is not None:
            config["thinking_config"] = thinking
            config["max_output_tokens"] += thinking.thinking_budget or 0  # thoughts draw on the same allowance
        if request.tools:
            config["tools"] = to_gemini_tools(request)
            config["automatic_function_calling"] = {"disable": True}
            mode = "NONE" if request.tool_choice == "none" else "AUTO"
            config["tool_config"] = {"function_calling_config": {"mode": mode}}
        return {"model": model, "contents": to_gemini_contents(request), "config": config}

    def _status_code(self, exc: Any) -> int | None:
        code = getattr(exc, "code", None)
        if code == 400 and _KEY_INVALID in str(getattr(exc, "details", "")) + str(getattr(exc, "message", "")):
            return 401  # Gemini refuses a wrong key with 400 API_KEY_INVALID: advise as for a rejected key
        return code if isinstance(code, int) else None

    def _status_detail(self, exc: Any) -> tuple[str, str | None]:
        status = getattr(exc, "status", None)
        return str(getattr(exc, "message", None) or exc), str(status) if status else None

    async def _call(self, client: GeminiClient, params: dict[str, Any], request: LLMRequest, model: str) -> LLMResponse:
        if self.streamed(request):
            return await self._streamed(client, params, request, model)
        result: object = await client.aio.models.generate_content(**params)
        if not isinstance(result, genai_types.GenerateContentResponse):
            raise bad_response_error(self.name, model, f"not a generateContent answer: {preview(result)}")
        if not result.candidates:
            raise bad_response_error(self.name, model, f"the answer has no candidates{_blocked(result)}")
        candidate = result.candidates[0]
        parts = candidate.content.parts if candidate.content and candidate.content.parts else []
        return self._response(request, model, parts, candidate.finish_reason, result.usage_metadata)

    async def _streamed(self, client: GeminiClient, params: dict[str, Any], request: LLMRequest,
                        model: str) -> LLMResponse:
        """``streamGenerateContent``: parts arrive chunk by chunk; the finish reason and the usage
        come with the last chunks (each chunk's usage is the total so far)."""
        started = time.perf_counter()
        ttft: float | None = None
        parts: list[genai_types.Part] = []
        finish: Any = None
        usage: Any = None
        blocked = ""
        async for chunk in await client.aio.models.generate_content_stream(**params):
            usage = chunk.usage_metadata or usage
            if not chunk.candidates:
                blocked = blocked or _blocked(chunk)
                continue
            candidate = chunk.candidates[0]
            finish = candidate.finish_reason or finish
            new = candidate.content.parts if candidate.content and candidate.content.parts else []
            if ttft is None and any((p.text and not p.thought) or p.function_call for p in new):
                ttft = round((time.perf_counter() - started) * 1000, 2)
            parts.extend(new)
            for part in new:
                if part.text and not part.thought and part.function_call is None:
                    emit(request.on_delta, part.text)
        if not parts and finish is None:
            raise bad_response_error(self.name, model, f"the stream ended without a candidate{blocked}")
        response = self._response(request, model, parts, finish, usage)
        return replace(response, ttft_ms=ttft)

    def _response(self, request: LLMRequest, model: str, parts: list[genai_types.Part], finish: Any,
                  usage: Any) -> LLMResponse:
        text = "".join(p.text for p in parts if p.text and not p.thought)
        calls = tuple(_tool_call(p.function_call) for p in parts if p.function_call is not None)
        if not text and not calls:  # e.g. finishReason SAFETY, or thinking used up maxOutputTokens
            reason = getattr(finish, "value", finish) or "none"
            raise bad_response_error(self.name, model, f"no text and no function call (finish reason {reason})")
        thoughts = "".join(p.text for p in parts if p.text and p.thought)  # kept only on the owner's word
        return LLMResponse(text=text, model=request.model, tool_calls=calls, usage=_usage(usage),
                           stop_reason=_stop_reason(finish, bool(calls)), thinking=thoughts)


def _blocked(answer: genai_types.GenerateContentResponse) -> str:
    feedback = answer.prompt_feedback
    return f" (blocked: {feedback.block_reason})" if feedback and feedback.block_reason else ""


def _tool_call(call: genai_types.FunctionCall) -> ToolCall:
    args = call.args if isinstance(call.args, dict) else {}
    return ToolCall(id=call.id or f"call_{secrets.token_hex(6)}", name=call.name or "", arguments=args,
                    raw_arguments=json.dumps(args, ensure_ascii=False))

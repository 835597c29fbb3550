"""OpenAI Chat Completions (and any OpenAI-compatible server) as an :class:`LLMProvider`.

``llm.providers.openai.base_url`` points the official ``openai`` SDK at Ollama, vLLM,
LM Studio, a llama.cpp server or a test fake. The system prompt goes out as one system
message whose static block comes first, so OpenAI's automatic prefix caching can reuse
it from turn to turn; ``cached_tokens`` is reported as cache reads. The SDK's own retries
are off: :mod:`board.llm.resilience` decides about retries and fallbacks.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import openai

from board.llm.base import (
    ChatMessage,
    LLMError,
    LLMRequest,
    LLMResponse,
    ToolCall,
    Usage,
)
from board.llm.errors import (
    ProviderSettings,
    connection_error,
    missing_key_error,
    status_error,
    timeout_error,
)
from board.llm.registry import split_model

log = logging.getLogger("sabha.llm.openai")

#: Placeholder key for local servers that ignore it (the SDK refuses an empty key).
NO_KEY = "sabha-no-key"


def to_openai_messages(request: LLMRequest) -> list[dict[str, Any]]:
    """The request as Chat Completions ``messages`` (system first)."""
    out: list[dict[str, Any]] = []
    system = request.system_text
    if system:
        out.append({"role": "system", "content": system})
    for message in request.messages:
        out.append(_message(message))
    return out


def _message(message: ChatMessage) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": message.content}
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            "content": message.content or None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": call.raw_arguments
                        if call.parse_error and call.raw_arguments is not None
                        else json.dumps(call.arguments, ensure_ascii=False),
                    },
                }
                for call in message.tool_calls
            ],
        }
    body: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.name and message.role == "user":
        body["name"] = message.name
    return body


def to_openai_tools(request: LLMRequest) -> list[dict[str, Any]]:
    """Tool specs as Chat Completions ``tools``."""
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in request.tools
    ]


def parse_arguments(call_id: str, name: str, raw: str | None) -> ToolCall:
    """A tool call whose JSON-string arguments are parsed; bad JSON is kept as a parse error."""
    text = raw or ""
    if not text.strip():
        return ToolCall(id=call_id, name=name, arguments={}, raw_arguments=text)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return ToolCall(id=call_id, name=name, arguments={}, raw_arguments=text,
                        parse_error=f"arguments are not valid JSON ({exc.msg} at character {exc.pos})")
    if not isinstance(value, dict):
        return ToolCall(id=call_id, name=name, arguments={}, raw_arguments=text,
                        parse_error=f"arguments must be a JSON object, got {type(value).__name__}")
    return ToolCall(id=call_id, name=name, arguments=value, raw_arguments=text)


def _usage(raw: Any) -> Usage:
    if raw is None:
        return Usage()
    prompt = int(getattr(raw, "prompt_tokens", 0) or 0)
    details = getattr(raw, "prompt_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    cached = min(cached, prompt)
    return Usage(
        input_tokens=prompt - cached,
        output_tokens=int(getattr(raw, "completion_tokens", 0) or 0),
        cache_read_tokens=cached,
    )


class OpenAIProvider:
    """Chat Completions with tools over the official SDK; see the module docstring."""

    name = "openai"

    def __init__(self, settings: ProviderSettings) -> None:
        self.settings = settings
        self._client: openai.AsyncOpenAI | None = None

    def _client_or_error(self, model: str) -> openai.AsyncOpenAI:
        if self._client is None:
            key = self.settings.api_key
            if not key:
                if not (self.settings.key_optional or self.settings.base_url):
                    raise missing_key_error(self.name, self.settings.key_env or "OPENAI_API_KEY")
                key = NO_KEY
            self._client = openai.AsyncOpenAI(
                api_key=key,
                base_url=self.settings.base_url or None,
                timeout=self.settings.timeout_s,
                max_retries=0,
            )
        return self._client

    async def close(self) -> None:
        """Close the HTTP client."""
        if self._client is not None:
            await self._client.close()
            self._client = None

    def _params(self, request: LLMRequest, model: str) -> dict[str, Any]:
        params: dict[str, Any] = {"model": model, "messages": to_openai_messages(request)}
        # api.openai.com wants max_completion_tokens (reasoning models refuse max_tokens);
        # OpenAI-compatible servers generally only know max_tokens.
        if self.settings.base_url:
            params["max_tokens"] = request.max_tokens
        else:
            params["max_completion_tokens"] = request.max_tokens
        if request.tools:
            params["tools"] = to_openai_tools(request)
            params["tool_choice"] = request.tool_choice
        return params

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """One Chat Completions call (streamed when configured)."""
        _, model = split_model(request.model)
        if not model:
            raise LLMError(f"model {request.model!r} names no OpenAI model; write openai:<model>", kind="config")
        client = self._client_or_error(request.model)
        params = self._params(request, model)
        try:
            if self.settings.stream:
                return await self._streamed(client, params, request.model)
            result = await client.chat.completions.create(**params)
        except openai.APITimeoutError as exc:
            raise timeout_error(self.name, model, self.settings.timeout_s) from exc
        except openai.APIConnectionError as exc:
            raise connection_error(self.name, model, self.settings.base_url, exc) from exc
        except openai.APIStatusError as exc:
            raise status_error(
                self.name, model, exc.status_code, _message_of(exc),
                headers=dict(exc.response.headers), code=getattr(exc, "code", None),
                key_env=self.settings.key_env or "OPENAI_API_KEY",
            ) from exc
        except openai.APIError as exc:  # e.g. an error event mid-stream: no status
            raise status_error(self.name, model, None, _message_of(exc)) from exc
        except openai.OpenAIError as exc:
            raise LLMError(f"{self.name} ({model}): {exc}", kind="other") from exc
        if not result.choices:
            raise LLMError(f"{self.name} ({model}): the reply had no choices", retryable=True, kind="server")
        choice = result.choices[0]
        message = choice.message
        calls = tuple(
            parse_arguments(tc.id, tc.function.name, tc.function.arguments)
            for tc in (message.tool_calls or [])
            if getattr(tc, "function", None) is not None
        )
        return LLMResponse(
            text=message.content or "",
            model=request.model,
            tool_calls=calls,
            usage=_usage(result.usage),
            stop_reason=_stop_reason(choice.finish_reason),
        )

    async def _streamed(self, client: openai.AsyncOpenAI, params: dict[str, Any], model: str) -> LLMResponse:
        started = time.perf_counter()
        ttft: float | None = None
        text: list[str] = []
        slots: dict[int, dict[str, str]] = {}
        finish: str | None = None
        usage: Any = None
        stream = await client.chat.completions.create(**params, stream=True, stream_options={"include_usage": True})
        async for chunk in stream:
            if chunk.usage is not None:
                usage = chunk.usage
            if not chunk.choices:
                continue
            choice = chunk.choices[0]
            delta = choice.delta
            if ttft is None and (delta.content or delta.tool_calls):
                ttft = round((time.perf_counter() - started) * 1000, 2)
            if delta.content:
                text.append(delta.content)
            for d in delta.tool_calls or []:
                slot = slots.setdefault(d.index, {"id": "", "name": "", "args": ""})
                slot["id"] += d.id or ""
                if d.function is not None:
                    slot["name"] += d.function.name or ""
                    slot["args"] += d.function.arguments or ""
            finish = choice.finish_reason or finish
        calls = tuple(parse_arguments(s["id"], s["name"], s["args"]) for _, s in sorted(slots.items()))
        return LLMResponse(
            text="".join(text), model=model, tool_calls=calls, usage=_usage(usage),
            stop_reason=_stop_reason(finish), ttft_ms=ttft,
        )


def _stop_reason(finish: str | None) -> str:
    return {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}.get(finish or "", finish or "end_turn")


def _message_of(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error") if isinstance(body.get("error"), dict) else body
        msg = inner.get("message") if isinstance(inner, dict) else None
        if msg:
            return str(msg)
    return str(getattr(exc, "message", None) or exc)

"""OpenAI Chat Completions (and any OpenAI-compatible server) as an :class:`LLMProvider`.

``llm.providers.openai.base_url`` points the official ``openai`` SDK at Ollama, vLLM,
LM Studio, a llama.cpp server or a test fake. The system prompt goes out as one system
message (static block first, then the compaction summary), then the history, then the new
message with the per-turn context (:attr:`~board.llm.base.ChatMessage.context`) after its
text. Everything before that context is byte-identical to the previous turn's prompt
between compactions, so OpenAI's automatic prefix caching (and a compatible server's,
e.g. vLLM or llama.cpp prefix caching) reuses it; ``usage.prompt_tokens_details.cached_tokens``
is reported as cache reads. Breakpoint marks are Anthropic's and are ignored here. The SDK's
own retries are off: :mod:`board.llm.resilience` decides about retries and fallbacks.

Audio (:class:`board.llm.audio.AudioProvider`): :meth:`OpenAIProvider.transcribe` posts a voice
note to ``/audio/transcriptions`` and :meth:`OpenAIProvider.speak` asks ``/audio/speech`` for
OGG/Opus, through the same client (same key, same ``base_url``: a self-hosted
faster-whisper server stands in for OpenAI there); :mod:`board.media.speech` retries them.
"""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import openai

from board.llm.audio import AudioClip, SpeechTranscript
from board.llm.base import ChatMessage, ImagePart, LLMError, LLMRequest, LLMResponse, Thinking, ToolCall, Usage
from board.llm.errors import bad_response_error
from board.llm.registry import split_model
from board.llm.sdk_provider import SDKErrors, SDKProvider, answer_json, as_sent, preview
from board.llm.stream import emit

__all__ = ["NO_KEY", "OpenAIProvider", "parse_arguments", "to_openai_messages", "to_openai_tools"]

_AS_SENT = ("messages", "tools")  # sent as built: see board.llm.sdk_provider.as_sent

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
    content = f"{message.content}\n\n{message.context}" if message.context else message.content
    body: dict[str, Any] = {"role": message.role, "content": content}
    if message.images and message.role == "user":  # content parts: the text, then each picture
        body["content"] = [{"type": "text", "text": content}, *(_image_part(i) for i in message.images)]
    if message.name and message.role == "user":
        body["name"] = message.name
    return body


def _image_part(image: ImagePart) -> dict[str, Any]:
    """A picture as an ``image_url`` content part with a base64 ``data:`` URL."""
    url = f"data:{image.mime};base64,{base64.b64encode(image.data).decode('ascii')}"
    return {"type": "image_url", "image_url": {"url": url}}


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
    """Usage from an answer's JSON (a dict) or a streamed chunk's SDK model."""
    if raw is None:
        return Usage()
    if isinstance(raw, dict):
        details = raw.get("prompt_tokens_details")
        prompt, out = _count(raw.get("prompt_tokens")), _count(raw.get("completion_tokens"))
        cached = _count(details.get("cached_tokens")) if isinstance(details, dict) else 0
    else:
        details = getattr(raw, "prompt_tokens_details", None)
        prompt, out = _count(getattr(raw, "prompt_tokens", 0)), _count(getattr(raw, "completion_tokens", 0))
        cached = _count(getattr(details, "cached_tokens", 0)) if details is not None else 0
    cached = min(cached, prompt)
    return Usage(input_tokens=prompt - cached, output_tokens=out, cache_read_tokens=cached)


def _count(value: Any) -> int:
    """A token count as sent (an int; null, absent or not a number: 0)."""
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


class OpenAIProvider(SDKProvider[openai.AsyncOpenAI]):
    """Chat Completions with tools over the official SDK; see the module docstring."""

    name = "openai"
    title = "OpenAI"
    default_key_env = "OPENAI_API_KEY"
    errors = SDKErrors.of(openai, base=openai.OpenAIError)

    def _api_key(self) -> str:
        if not self.settings.api_key and (self.settings.key_optional or self.settings.base_url):
            return NO_KEY  # a local server that ignores the key (the SDK refuses an empty one)
        return super()._api_key()

    def _make_client(self, api_key: str) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            api_key=api_key,
            base_url=self.settings.base_url or None,
            timeout=self.settings.timeout_s,
            max_retries=0,
            # the SDK's aiohttp transport (its `aiohttp` extra): httpx's default costs more CPU a call
            http_client=openai.DefaultAioHttpClient(timeout=self.settings.timeout_s),
        )

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
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if request.thinking and request.thinking != Thinking.OFF:
            params["reasoning_effort"] = str(request.thinking)
        return params

    def _status_detail(self, exc: Any) -> tuple[str, str | None]:
        return _message_of(exc), getattr(exc, "code", None)

    async def _call(
        self, client: openai.AsyncOpenAI, params: dict[str, Any], request: LLMRequest, model: str
    ) -> LLMResponse:
        if self.streamed(request):
            return await self._streamed(client, params, request, model)
        raw = await client.chat.completions.with_raw_response.create(**as_sent(params, _AS_SENT))
        return self._answer(answer_json(self.name, model, raw.content), request, model)

    def _answer(self, body: dict[str, Any], request: LLMRequest, model: str) -> LLMResponse:
        """A Chat Completions answer (its JSON, read once) as an :class:`LLMResponse`."""
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices:
            raise bad_response_error(self.name, model, "the completion has no choices")
        choice = choices[0]
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            raise bad_response_error(self.name, model, "the first choice has no message")
        calls = tuple(
            parse_arguments(str(tc.get("id") or ""), str(function.get("name") or ""), function.get("arguments"))
            for tc in (message.get("tool_calls") or [])
            if isinstance(tc, dict) and tc.get("type", "function") == "function"
            and isinstance(function := tc.get("function"), dict)
        )
        content = message.get("content")
        return LLMResponse(
            text=content if isinstance(content, str) else "",
            model=request.model,
            tool_calls=calls,
            usage=_usage(body.get("usage")),
            stop_reason=_stop_reason(choice.get("finish_reason")),
        )

    async def _streamed(self, client: openai.AsyncOpenAI, params: dict[str, Any], request: LLMRequest,
                        model: str) -> LLMResponse:
        started = time.perf_counter()
        ttft: float | None = None
        text: list[str] = []
        slots: dict[int, dict[str, str]] = {}
        finish: str | None = None
        usage: Any = None
        stream = await client.chat.completions.create(**as_sent(params, _AS_SENT),
                                                      stream=True, stream_options={"include_usage": True})
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
                emit(request.on_delta, delta.content)
            for d in delta.tool_calls or []:
                slot = slots.setdefault(d.index, {"id": "", "name": "", "args": ""})
                slot["id"] += d.id or ""
                if d.function is not None:
                    slot["name"] += d.function.name or ""
                    slot["args"] += d.function.arguments or ""
            finish = choice.finish_reason or finish
        if finish is None and not text and not slots:
            raise bad_response_error(self.name, model, "the stream ended without a completion chunk")
        calls = tuple(parse_arguments(s["id"], s["name"], s["args"]) for _, s in sorted(slots.items()))
        return LLMResponse(
            text="".join(text), model=request.model, tool_calls=calls, usage=_usage(usage),
            stop_reason=_stop_reason(finish), ttft_ms=ttft,
        )


    # -- audio (board.llm.audio.AudioProvider) ---------------------------------------------

    async def transcribe(self, model: str, clip: AudioClip, *, language: str | None = None,
                         timeout_s: float | None = None) -> SpeechTranscript:
        """``clip`` as text through ``POST /audio/transcriptions`` (``whisper-1``, ``gpt-4o-mini-transcribe``,
        or whatever an OpenAI-compatible server such as faster-whisper serves under ``model``)."""
        name = self._audio_model(model)
        params: dict[str, Any] = {"model": name, "file": (clip.filename, clip.data, clip.mime)}
        if language:
            params["language"] = language
        if timeout_s is not None:
            params["timeout"] = timeout_s
        with self.sdk_errors(name):
            result: object = await self._client_or_error().audio.transcriptions.create(**params)
        return _transcript(result, self.name, name)

    async def speak(self, model: str, text: str, *, voice: str, response_format: str = "opus") -> bytes:
        """``text`` spoken through ``POST /audio/speech`` (``opus``: OGG/Opus, what a voice note is)."""
        name = self._audio_model(model)
        with self.sdk_errors(name):
            response = await self._client_or_error().audio.speech.create(
                model=name, voice=voice, input=text, response_format=response_format)  # type: ignore[arg-type]
            data = response.content
        if not data:
            raise bad_response_error(self.name, name, "the speech answer has no audio")
        return data

    def _audio_model(self, model: str) -> str:
        _, name = split_model(model)
        if not name:
            raise LLMError(f"model {model!r} names no {self.title} model; write {self.name}:<model>", kind="config")
        return name


def _transcript(result: object, provider: str, model: str) -> SpeechTranscript:
    """The SDK's answer (a ``Transcription``; a bare string from a server that answers in text) as a
    SpeechTranscript."""
    if isinstance(result, str):
        return SpeechTranscript(result.strip())
    text = getattr(result, "text", None)
    if not isinstance(text, str):
        raise bad_response_error(provider, model, f"not a transcription: {preview(result)}")
    usage = getattr(result, "usage", None)
    duration: float | None = None
    tokens_in = tokens_out = 0
    if getattr(usage, "type", None) == "duration":
        duration = float(getattr(usage, "seconds", 0) or 0) or None
    elif getattr(usage, "type", None) == "tokens":
        tokens_in = int(getattr(usage, "input_tokens", 0) or 0)
        tokens_out = int(getattr(usage, "output_tokens", 0) or 0)
    if duration is None:  # verbose_json, and compatible servers (faster-whisper) that send it anyway
        extra = getattr(result, "duration", None)
        duration = float(extra) if isinstance(extra, (int, float)) and extra > 0 else None
    return SpeechTranscript(text.strip(), duration, tokens_in, tokens_out)


_STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


def _stop_reason(finish: str | None) -> str:
    return _STOP_REASONS.get(finish or "", finish or "end_turn")


def _message_of(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error") if isinstance(body.get("error"), dict) else body
        msg = inner.get("message") if isinstance(inner, dict) else None
        if msg:
            return str(msg)
    if isinstance(body, str) and body.strip():
        return body  # not JSON, e.g. a proxy's HTML page
    return str(getattr(exc, "message", None) or exc)

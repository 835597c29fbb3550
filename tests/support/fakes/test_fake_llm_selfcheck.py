"""Self-check of the fake LLM servers against the real official SDKs.

If one of these fails after an SDK upgrade, the fakes no longer speak the wire
format the SDK expects: fix the fake before trusting any test built on it.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator

import anthropic
import openai
import pytest

from tests.support.fakes.anthropic_api import FakeAnthropic
from tests.support.fakes.openai_api import FakeOpenAI

TOOLS_OPENAI = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Look a thing up.",
            "parameters": {
                "type": "object",
                "properties": {"q": {"type": "string"}},
                "required": ["q"],
            },
        },
    }
]
TOOLS_ANTHROPIC = [
    {
        "name": "lookup",
        "description": "Look a thing up.",
        "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
    }
]
USER = [{"role": "user", "content": "hello"}]
# fake_openai and fake_anthropic are conftest fixtures


@pytest.fixture
async def oai(fake_openai: FakeOpenAI) -> AsyncIterator[openai.AsyncOpenAI]:
    client = openai.AsyncOpenAI(base_url=fake_openai.base_url, api_key="test", max_retries=0)
    yield client
    await client.close()


@pytest.fixture
async def ant(fake_anthropic: FakeAnthropic) -> AsyncIterator[anthropic.AsyncAnthropic]:
    client = anthropic.AsyncAnthropic(base_url=fake_anthropic.base_url, api_key="test", max_retries=0)
    yield client
    await client.close()


# ----------------------------------------------------------------------------- OpenAI


async def test_openai_text_and_default(fake_openai: FakeOpenAI, oai: openai.AsyncOpenAI) -> None:
    fake_openai.script_text("Namaste, board.")
    r = await oai.chat.completions.create(model="gpt-4o", messages=USER)
    assert r.choices[0].message.content == "Namaste, board."
    assert r.choices[0].finish_reason == "stop"
    assert r.usage is not None
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens
    assert r.usage.prompt_tokens_details is not None
    assert r.usage.prompt_tokens_details.cached_tokens == 0

    r2 = await oai.chat.completions.create(model="gpt-4o", messages=USER)  # empty script
    assert r2.choices[0].message.content == fake_openai.default_text

    rec = fake_openai.requests[0]
    assert rec.path == "/v1/chat/completions"
    assert rec.body["messages"] == USER and rec.body["model"] == "gpt-4o"
    assert rec.headers["authorization"] == "Bearer test"


async def test_openai_tool_calls_and_round_trip(fake_openai: FakeOpenAI, oai: openai.AsyncOpenAI) -> None:
    fake_openai.script_tool_call("lookup", {"q": "gst rates"}, call_id="call_abc")
    r = await oai.chat.completions.create(
        model="gpt-4o", messages=USER, tools=TOOLS_OPENAI, tool_choice="auto"
    )
    choice = r.choices[0]
    assert choice.finish_reason == "tool_calls"
    call = choice.message.tool_calls[0]
    assert (call.id, call.type, call.function.name) == ("call_abc", "function", "lookup")
    assert json.loads(call.function.arguments) == {"q": "gst rates"}
    assert fake_openai.last_request.body["tools"] == TOOLS_OPENAI
    assert fake_openai.last_request.body["tool_choice"] == "auto"

    # the follow-up turn with the tool result is accepted...
    follow = [
        *USER,
        choice.message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": "call_abc", "content": "18%"},
    ]
    fake_openai.script_text("It is 18%.")
    r2 = await oai.chat.completions.create(model="gpt-4o", messages=follow, tools=TOOLS_OPENAI)
    assert r2.choices[0].message.content == "It is 18%."
    # ...and one that forgets the tool result is rejected, like the real API
    with pytest.raises(openai.BadRequestError) as ei:
        await oai.chat.completions.create(model="gpt-4o", messages=follow[:2] + USER)
    assert "call_abc" in ei.value.message


async def test_openai_429_is_rate_limit_error(fake_openai: FakeOpenAI, oai: openai.AsyncOpenAI) -> None:
    fake_openai.script_error(429, "rate_limit_exceeded", headers={"retry-after": "20"})
    with pytest.raises(openai.RateLimitError) as ei:
        await oai.chat.completions.create(model="gpt-4o", messages=USER)
    err = ei.value
    assert err.status_code == 429 and err.code == "rate_limit_exceeded"
    assert err.response.headers["retry-after"] == "20"
    assert len(fake_openai.requests) == 1  # max_retries=0: no retry


async def test_openai_errors_map_to_sdk_classes(fake_openai: FakeOpenAI, oai: openai.AsyncOpenAI) -> None:
    fake_openai.script_error(401, "invalid_api_key")
    fake_openai.script_error(500, "server_error")
    with pytest.raises(openai.AuthenticationError):
        await oai.chat.completions.create(model="gpt-4o", messages=USER)
    with pytest.raises(openai.InternalServerError):
        await oai.chat.completions.create(model="gpt-4o", messages=USER)


async def test_openai_retries_honour_retry_after_ms(fake_openai: FakeOpenAI) -> None:
    fake_openai.script_error(429, "rate_limit_exceeded", headers={"retry-after-ms": "10"})
    fake_openai.script_error(500, "server_error", headers={"retry-after-ms": "10"})
    fake_openai.script_text("third time lucky")
    async with openai.AsyncOpenAI(base_url=fake_openai.base_url, api_key="test", max_retries=2) as c:
        r = await c.chat.completions.create(model="gpt-4o", messages=USER)
    assert r.choices[0].message.content == "third time lucky"
    assert [q.headers["x-stainless-retry-count"] for q in fake_openai.requests] == ["0", "1", "2"]


async def test_openai_timeout_and_disconnect(fake_openai: FakeOpenAI, oai: openai.AsyncOpenAI) -> None:
    fake_openai.script_delay(5, then="too late")
    t0 = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        await oai.chat.completions.create(model="gpt-4o", messages=USER, timeout=0.2)
    assert time.monotonic() - t0 < 2
    fake_openai.script_disconnect()
    with pytest.raises(openai.APIConnectionError):
        await oai.chat.completions.create(model="gpt-4o", messages=USER)


async def test_openai_streaming_text_with_usage(fake_openai: FakeOpenAI, oai: openai.AsyncOpenAI) -> None:
    fake_openai.script_text("One two three four.")
    stream = await oai.chat.completions.create(
        model="gpt-4o", messages=USER, stream=True, stream_options={"include_usage": True}
    )
    text, finish, usage = "", None, None
    async for chunk in stream:
        if chunk.choices:
            text += chunk.choices[0].delta.content or ""
            finish = chunk.choices[0].finish_reason or finish
        if chunk.usage is not None:
            usage = chunk.usage
    assert text == "One two three four."
    assert finish == "stop"
    assert usage is not None and usage.completion_tokens > 0
    assert fake_openai.last_request.body["stream_options"] == {"include_usage": True}


async def test_openai_streaming_tool_calls(fake_openai: FakeOpenAI, oai: openai.AsyncOpenAI) -> None:
    fake_openai.script_tool_calls([("lookup", {"q": "a"}), ("lookup", {"q": "b"})])
    stream = await oai.chat.completions.create(model="gpt-4o", messages=USER, tools=TOOLS_OPENAI, stream=True)
    calls: dict[int, dict[str, str]] = {}
    finish = None
    async for chunk in stream:
        for d in chunk.choices[0].delta.tool_calls or []:
            slot = calls.setdefault(d.index, {"id": "", "name": "", "args": ""})
            slot["id"] += d.id or ""
            slot["name"] += (d.function.name or "") if d.function else ""
            slot["args"] += (d.function.arguments or "") if d.function else ""
        finish = chunk.choices[0].finish_reason or finish
    assert finish == "tool_calls"
    assert [json.loads(c["args"]) for c in calls.values()] == [{"q": "a"}, {"q": "b"}]
    assert all(c["id"].startswith("call_") and c["name"] == "lookup" for c in calls.values())


async def test_openai_cached_tokens_for_repeated_long_prefix(
    fake_openai: FakeOpenAI, oai: openai.AsyncOpenAI
) -> None:
    system = {"role": "system", "content": "You are the chair of the board. " * 200}  # ~1600 tokens
    await oai.chat.completions.create(model="gpt-4o", messages=[system, *USER])
    r = await oai.chat.completions.create(model="gpt-4o", messages=[system, {"role": "user", "content": "again"}])
    cached = r.usage.prompt_tokens_details.cached_tokens
    assert cached > 0 and cached % 128 == 0 and cached <= r.usage.prompt_tokens


# -------------------------------------------------------------------------- Anthropic


async def test_anthropic_text(fake_anthropic: FakeAnthropic, ant: anthropic.AsyncAnthropic) -> None:
    fake_anthropic.script_text("Namaste, board.")
    r = await ant.messages.create(model="claude-sonnet-4-6", max_tokens=256, messages=USER)
    assert [b.type for b in r.content] == ["text"]
    assert r.content[0].text == "Namaste, board."
    assert r.stop_reason == "end_turn"
    assert r.usage.input_tokens > 0 and r.usage.output_tokens > 0
    rec = fake_anthropic.last_request
    assert rec.path == "/v1/messages"
    assert rec.body["max_tokens"] == 256
    assert "anthropic-version" in rec.headers


async def test_anthropic_tool_use_and_round_trip(
    fake_anthropic: FakeAnthropic, ant: anthropic.AsyncAnthropic
) -> None:
    fake_anthropic.script_tool_call("lookup", {"q": "gst"}, call_id="toolu_1", text="Checking.")
    r = await ant.messages.create(
        model="claude-sonnet-4-6",
        max_tokens=256,
        messages=USER,
        tools=TOOLS_ANTHROPIC,
        tool_choice={"type": "auto"},
    )
    assert r.stop_reason == "tool_use"
    assert [b.type for b in r.content] == ["text", "tool_use"]
    use = r.content[1]
    assert (use.id, use.name, use.input) == ("toolu_1", "lookup", {"q": "gst"})
    assert fake_anthropic.last_request.body["tools"] == TOOLS_ANTHROPIC

    assistant = {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in r.content]}
    result = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "18%"}],
    }
    fake_anthropic.script_text("It is 18%.")
    r2 = await ant.messages.create(
        model="claude-sonnet-4-6", max_tokens=256, messages=[*USER, assistant, result], tools=TOOLS_ANTHROPIC
    )
    assert r2.content[0].text == "It is 18%."
    with pytest.raises(anthropic.BadRequestError) as ei:  # tool_use without tool_result
        await ant.messages.create(model="claude-sonnet-4-6", max_tokens=256, messages=[*USER, assistant, *USER])
    assert "toolu_1" in str(ei.value.api_message)


async def test_anthropic_system_cache_control_as_sent_and_cached(
    fake_anthropic: FakeAnthropic, ant: anthropic.AsyncAnthropic
) -> None:
    system = [
        {"type": "text", "text": "You are the chair. " * 40, "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "Today is Monday."},
    ]
    r1 = await ant.messages.create(model="claude-sonnet-4-6", max_tokens=64, system=system, messages=USER)
    assert fake_anthropic.last_request.body["system"] == system  # received exactly as sent
    assert r1.usage.cache_creation_input_tokens > 0 and r1.usage.cache_read_input_tokens == 0

    r2 = await ant.messages.create(
        model="claude-sonnet-4-6", max_tokens=64, system=system, messages=[{"role": "user", "content": "again"}]
    )
    assert r2.usage.cache_read_input_tokens == r1.usage.cache_creation_input_tokens
    assert r2.usage.cache_creation_input_tokens == 0
    total1 = r1.usage.input_tokens + r1.usage.cache_creation_input_tokens + r1.usage.cache_read_input_tokens
    assert total1 > r1.usage.cache_creation_input_tokens > 0


async def test_anthropic_429_is_rate_limit_error(
    fake_anthropic: FakeAnthropic, ant: anthropic.AsyncAnthropic
) -> None:
    fake_anthropic.script_error(429, "rate_limit_error", "slow down", headers={"retry-after": "7"})
    with pytest.raises(anthropic.RateLimitError) as ei:
        await ant.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=USER)
    err = ei.value
    assert err.status_code == 429 and err.type == "rate_limit_error" and err.api_message == "slow down"
    assert err.response.headers["retry-after"] == "7"
    assert err.body["error"]["type"] == "rate_limit_error"
    assert len(fake_anthropic.requests) == 1


async def test_anthropic_errors_map_to_sdk_classes(
    fake_anthropic: FakeAnthropic, ant: anthropic.AsyncAnthropic
) -> None:
    fake_anthropic.script_error(529, "overloaded_error")
    fake_anthropic.script_error(401, "authentication_error")
    with pytest.raises(anthropic.OverloadedError) as ei:
        await ant.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=USER)
    assert isinstance(ei.value, anthropic.InternalServerError) and ei.value.status_code == 529
    with pytest.raises(anthropic.AuthenticationError):
        await ant.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=USER)


async def test_anthropic_timeout_and_disconnect(
    fake_anthropic: FakeAnthropic, ant: anthropic.AsyncAnthropic
) -> None:
    fake_anthropic.script_delay(5)
    with pytest.raises(anthropic.APITimeoutError):
        await ant.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=USER, timeout=0.2)
    fake_anthropic.script_disconnect()
    with pytest.raises(anthropic.APIConnectionError):
        await ant.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=USER)


async def test_anthropic_streaming(fake_anthropic: FakeAnthropic, ant: anthropic.AsyncAnthropic) -> None:
    fake_anthropic.script_tool_call("lookup", {"q": "x"}, text="Let me look.")
    async with ant.messages.stream(
        model="claude-sonnet-4-6", max_tokens=64, messages=USER, tools=TOOLS_ANTHROPIC
    ) as stream:
        streamed = "".join([t async for t in stream.text_stream])
        final = await stream.get_final_message()
    assert streamed == "Let me look."
    assert final.stop_reason == "tool_use"
    assert final.content[1].input == {"q": "x"}
    assert final.usage.output_tokens > 1

    fake_anthropic.script_stream_error("partial", "overloaded_error")
    with pytest.raises(anthropic.APIStatusError) as ei:
        async with ant.messages.stream(model="claude-sonnet-4-6", max_tokens=64, messages=USER) as s:
            async for _ in s:
                pass
    assert ei.value.type == "overloaded_error"  # mid-stream: status_code is 200, not 529

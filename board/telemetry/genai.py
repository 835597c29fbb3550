"""The attribute names Sabha's spans carry: OpenTelemetry's GenAI semantic conventions (model, provider, tokens
in, out and read from the cache, the tool's name and call id) and Sabha's own (``sabha.*``: cost, role, purpose,
channel, meeting, round). Plain strings, so naming them imports nothing of OpenTelemetry.

The GenAI names are those of the conventions' registry (``gen_ai.provider.name`` superseded ``gen_ai.system``; both
are set, for backends that read either).
"""

from __future__ import annotations

__all__ = ["CACHE_READ_TOKENS", "CACHE_WRITE_TOKENS", "COST_USD", "INPUT_TOKENS", "OPERATION", "OUTPUT_TOKENS",
           "PROVIDER", "REQUEST_MODEL", "RESPONSE_MODEL", "ROLE", "SYSTEM", "TOOL_CALL_ID", "TOOL_NAME"]

OPERATION = "gen_ai.operation.name"  # chat, execute_tool, invoke_agent
PROVIDER = "gen_ai.provider.name"
SYSTEM = "gen_ai.system"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
CACHE_READ_TOKENS = "gen_ai.usage.cache_read.input_tokens"
CACHE_WRITE_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
COST_USD = "sabha.cost_usd"
ROLE = "sabha.role"

"""The LLM layer: one provider protocol and its implementations."""

from board.llm.base import (
    ChatMessage,
    LLMError,
    LLMProvider,
    LLMRequest,
    LLMResponse,
    Persona,
    PromptBlock,
    ToolCall,
    ToolSpec,
    Usage,
)

__all__ = [
    "ChatMessage",
    "LLMError",
    "LLMProvider",
    "LLMRequest",
    "LLMResponse",
    "Persona",
    "PromptBlock",
    "ToolCall",
    "ToolSpec",
    "Usage",
]

"""The LLM layer: one provider protocol (:mod:`board.llm.base`), its implementations (offline,
OpenAI-compatible, Anthropic), and the retries, fallbacks and error wording around them; prices, vision,
audio, streaming and token counting."""

# Submodules, imported on use (this file imports none of them).
__all__ = ["anthropic", "audio", "base", "errors", "gemini", "offline", "offline_json", "offline_meeting",
           "offline_tools", "offline_topic", "openai", "pricing", "purpose", "registry", "resilience", "sdk_provider",
           "stream", "text_tools", "tokens", "vision"]

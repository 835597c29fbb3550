"""The LLM layer: one provider protocol (:mod:`board.llm.base`), its implementations (offline,
OpenAI-compatible, Anthropic), and the retries, fallbacks and error wording around them."""

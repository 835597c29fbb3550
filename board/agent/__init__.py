"""Agent turns: the runner (soul -> prompt -> model <-> tools -> answer) and its exchange pipeline, the
tool registry and the seam for outside (MCP) tools and their consent, the context budget and compaction,
how a summary is asked, the guardrails and disclosure checks on what goes out, and web search. Token
counting is :mod:`board.llm.tokens`."""

# Submodules, imported on use (this file imports none of them).
__all__ = ["compaction", "disclosure", "exchange", "guardrail_settings", "guardrails", "locks", "migrations",
           "outside", "runner", "speaker", "summarizer", "tools", "turn", "web_search"]

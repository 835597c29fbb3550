"""Agent turns: the runner (soul -> prompt -> model <-> tools -> answer), the tool registry,
the context budget and compaction, and token counting."""

# Submodules, imported on use (this file imports none of them).
__all__ = ["compaction", "runner", "speaker", "tokens", "tools"]

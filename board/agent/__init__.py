"""Agent turns: the runner (soul -> prompt -> model <-> tools -> answer), the tool registry,
the context budget and compaction, and token counting."""

"""The workspace owners edit: soul files, AGENTS.md / USER.md, prompt templates; path safety
and last-good reloading of every file the prompt reads."""

# Submodules, imported on use (this file imports none of them).
__all__ = ["files", "paths", "prompt", "quoting", "souls"]

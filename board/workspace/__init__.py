"""The workspace owners edit: soul files, AGENTS.md / USER.md, prompt templates; path safety
and last-good reloading of every file the prompt reads."""

"""The channel contract suite: the same user-facing tests, run over every channel."""

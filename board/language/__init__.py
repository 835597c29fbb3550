"""What people's words say, read without a model: which language they write in, what durable facts a
sentence states, and whether a text holds a secret (a password, a card number, a key)."""

# Submodules, imported on use (this file imports none of them).
__all__ = ["detect", "secrets", "statements"]

"""What people's words say, read without a language model: which language they write in, what durable facts a
sentence states, and whether a text holds a secret (a password, a card number, a key; pattern rules beside a
small learned linear model, :mod:`board.language.learned`, whose weights ship as JSON)."""

# Submodules, imported on use (this file imports none of them).
__all__ = ["detect", "learned", "secret_model", "secret_use", "secrets", "statements"]

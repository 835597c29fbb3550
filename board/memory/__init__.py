"""What the board remembers about people, above the agent: the facts a role keeps (the ``remember`` tool),
the facts that write themselves after a turn (extraction), their consolidation (memory that tidies itself), and
the knowledge base the advisors search.
The conversations themselves (sessions, transcripts) are :mod:`board.conversation`; the ledger is
:mod:`board.spending`."""

# Submodules, imported on use (this file imports none of them).
__all__ = ["consolidation", "extract", "facts", "knowledge", "migrations"]

"""What a model call is for: the closed set of purposes every call site names.

Each model call is one row of the cost ledger (``llm_calls.purpose``), and ``sabha cost --by purpose``
groups them by it, so an operator sees what the model is called for besides answering (the memory's
extraction after turns, compaction, a brief...). A call site names its purpose with a member of
:class:`CallPurpose`; the offline model reads it too (``request.metadata["purpose"]``) to know what is
asked. Values are the strings stored in the ledger: ``meeting`` is one seat's say in a board meeting
(its synthesis included, told apart by the ``phase`` tag), kept under its earlier name so older rows
group with newer ones.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["BACKGROUND_PURPOSES", "CallPurpose"]


class CallPurpose(StrEnum):
    """Why a model was called (the ledger's ``purpose`` column)."""

    TURN = "turn"                    # a chat turn's answer (and its tool rounds)
    CONSULT = "consult"              # an advisor consulted by another
    MEETING = "meeting"              # a seat's say in a board meeting (phase in the tags)
    ROUNDTABLE = "roundtable"        # a debater or the summarizer of a roundtable
    COMPACTION = "compaction"        # the running summary of a long conversation
    EXTRACTION = "extraction"        # the facts a person stated, heard after their turn (user memory)
    CONSOLIDATION = "consolidation"  # memory consolidation
    EMBEDDING = "embedding"          # vectors for recall: passages embedded in the background
    EMBEDDING_QUERY = "embedding-query"  # vectors for recall: a recall's question
    BRIEF = "brief"                  # a standing brief
    TITLE = "title"                  # a short title for a conversation or meeting
    TRANSCRIBE = "transcribe"        # speech to text (a voice note)
    SPEECH = "speech"                # text to speech (a spoken reply)


#: Calls made for the board's own upkeep, not to answer someone: cheap model, capped, skippable.
BACKGROUND_PURPOSES = frozenset({CallPurpose.EXTRACTION, CallPurpose.CONSOLIDATION, CallPurpose.COMPACTION,
                                 CallPurpose.EMBEDDING, CallPurpose.TITLE})

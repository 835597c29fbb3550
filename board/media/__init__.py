"""Media: what people send besides text (voice notes, pictures, documents ...), for every channel.

A channel parses the service's references into :class:`Attachment` values (no download at
receipt); the intake asks :class:`MediaService` to fetch and understand them in the
conversation's lane; the turn gets them as quoted data and, for a model that sees, as image
parts. The only media thing a channel implements is :class:`MediaFetcher`.
"""

from board.media.attachment import Attachment, MediaKind, MediaRef, attachment_from_dict, attachment_to_dict
from board.media.blobs import Blob, BlobSink, BlobStore
from board.media.problems import MediaProblem, Problem
from board.media.settings import MediaSettings, SpeakReplies, channel_limit
from board.media.understand import MediaFetcher, UnderstandContext, Understander

__all__ = [
    "Attachment",
    "Blob",
    "BlobSink",
    "BlobStore",
    "MediaFetcher",
    "MediaKind",
    "MediaProblem",
    "MediaRef",
    "MediaSettings",
    "Problem",
    "SpeakReplies",
    "UnderstandContext",
    "Understander",
    "attachment_from_dict",
    "attachment_to_dict",
    "channel_limit",
]

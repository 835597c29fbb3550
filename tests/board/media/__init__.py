"""Tests of board/media/: the blob store, readers, pictures, documents, voice, limits."""

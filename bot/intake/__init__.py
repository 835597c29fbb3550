"""The intake: the one life of an inbound message, shared by every channel."""

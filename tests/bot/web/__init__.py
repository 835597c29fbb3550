"""Tests of bot/web/: the owner's pages, sign-in, the live meeting stream."""

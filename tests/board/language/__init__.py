"""Tests of board/language/: the language a person writes in; statements and secrets in text."""

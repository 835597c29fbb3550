"""Tests of the project itself: packaging, the Makefile, the test suite's own machinery, the docs."""

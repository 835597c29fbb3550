"""Whole-daemon tests across parts: kill -9 at any moment, durability, replicas behind nginx, start-up against a
missing network or state store."""

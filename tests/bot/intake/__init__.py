"""Tests of bot/intake/: the durable inbox, the scheduler, delivery outcomes, notices."""

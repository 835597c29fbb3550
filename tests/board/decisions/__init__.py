"""Tests of decision life: actions, ratify, due dates and reminders, predictions, calibration, recall, reviews."""

"""Tests of bot/replicas/: the registry, the leader, races only replicas have."""

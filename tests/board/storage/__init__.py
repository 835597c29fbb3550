"""Tests of board/storage/ and the state db: both backends, migrations, leases, upgrades."""

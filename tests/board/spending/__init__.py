"""Tests of board/spending/: the ledger, budgets, what strangers may cost."""

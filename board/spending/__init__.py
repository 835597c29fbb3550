"""What the board spends: the ledger of every model and tool call (tokens, cost, latency), the daily
budget read from it, and the allowance that holds a stranger's model call against their limits before
it is made."""

# Submodules, imported on use (this file imports none of them).
__all__ = ["allowance", "budget", "ledger", "migrations", "tool_costs"]

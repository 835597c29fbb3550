"""Which role answers a message and in which session: the router (envelope -> role and session key) and
addressing (who a message names: ``@finance``, "finance, ...", a reply to a role's message)."""

# Submodules, imported on use (this file imports none of them).
__all__ = ["address_model", "addressing", "cached", "router"]

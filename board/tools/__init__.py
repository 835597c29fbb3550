"""Tools that reach outside Sabha (MCP servers) and what guards them: ``consent``, the owner's Allow before a
tool that changes the world runs (:class:`board.agent.outside.ConsentGate`)."""

__all__ = ["consent"]

"""Tools from outside Sabha: the MCP client (:mod:`board.tools.mcp`) that connects the servers named in
``sabha.yaml``, keeps their tool lists, and offers a role the tools of the servers it was given, their
descriptions and results quoted as data, every call bounded and priced (the seam is :mod:`board.agent.outside`);
and ``consent``, the owner's Allow before a tool that changes the world runs (:class:`board.agent.outside.ConsentGate`).
"""

# Submodules, imported on use (this file imports none of them).
__all__ = ["consent", "mcp"]

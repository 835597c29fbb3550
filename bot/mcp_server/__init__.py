"""The board as an MCP server: other agents and desktop clients ask its advisors, convene meetings and read
its decisions through the Model Context Protocol (the official ``mcp`` SDK's server side).

- :mod:`bot.mcp_server.board_tools`: what each tool does, over the board's own services (:class:`BoardDesk`)
- :mod:`bot.mcp_server.server`: the SDK's ``MCPServer`` with the board's five tools
- :mod:`bot.mcp_server.config`: config ``server.mcp`` (the HTTP endpoint on ``sabha run``)
- :mod:`bot.mcp_server.asgi_bridge`: an ASGI application served from an aiohttp handler
- :mod:`bot.mcp_server.endpoint`: the streamable-HTTP endpoint on the daemon's server, behind the owner's token

``sabha mcp serve`` (stdio) is :mod:`bot.cli.mcp`. This face imports nothing (the config loads
:mod:`bot.mcp_server.config` on every command, which must not pay for the SDK).
"""

__all__: list[str] = []

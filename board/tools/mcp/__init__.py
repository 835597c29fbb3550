"""The MCP client: servers declared in ``mcp.servers`` (stdio or streamable HTTP), connected with the official
SDK, watched and restarted (:class:`McpServers`), their tools offered to the roles given them as outside
tools (:class:`board.agent.outside.OutsideTools`), results quoted as data and cited as ``[server.tool]``."""

from board.tools.mcp.grants import McpGrant, grants_in
from board.tools.mcp.servers import McpServers
from board.tools.mcp.settings import McpSettings, ServerSpec
from board.tools.mcp.state import ServerState, ServerStatus

__all__ = ["McpGrant", "McpServers", "McpSettings", "ServerSpec", "ServerState", "ServerStatus", "grants_in"]

-- the MCP server an outside tool came from (mcp.servers.<name>); NULL: one of Sabha's own tools
ALTER TABLE tool_calls ADD COLUMN server TEXT;

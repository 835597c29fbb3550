"""Tests of board/tools/mcp/: the MCP client against real servers other people wrote (and small fakes of ours)."""

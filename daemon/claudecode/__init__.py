"""Claude Code: its transcripts as a session source, its hooks and MCP entry, its injector."""

"""Codex CLI: its rollouts as a session source, its hooks and MCP entry, its injector."""

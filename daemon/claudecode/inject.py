"""What Claude Code is told with memoryd's block: how it calls memoryd's tools there.

Claude Code defers MCP tools behind ToolSearch (CLAUDECODE.md): a tool is callable only
after a `select:` search names it.
"""

TOOLS = (
    "memoryd in Claude Code: its MCP tools are deferred. Load them first with ToolSearch "
    '{"query": "select:mcp__memoryd__recall,mcp__memoryd__remember,mcp__memoryd__inspect"}, '
    "then call mcp__memoryd__recall (search), mcp__memoryd__inspect (read one memory by id) and "
    "mcp__memoryd__remember (save a decision, gotcha or lesson) where the block below says "
    "memoryd_recall, memoryd_inspect and memoryd_remember."
)

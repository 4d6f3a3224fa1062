"""What Codex is told with memoryd's block: how it calls memoryd's tools there.

Codex offers each MCP server as one namespace tool (CODEX.md): memoryd's are the
functions of the `mcp__memoryd` namespace.
"""

TOOLS = (
    "memoryd in Codex: its tools are the functions of the mcp__memoryd namespace: recall "
    "(search), inspect (read one memory by id) and remember (save a decision, gotcha or lesson), "
    "where the block below says memoryd_recall, memoryd_inspect and memoryd_remember."
)

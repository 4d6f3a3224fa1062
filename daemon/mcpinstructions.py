"""What memoryd's MCP server tells the model when it connects: a function of the project
alone, so that `daemon.mcpfront` can answer a handshake without the MCP SDK."""

from __future__ import annotations

from pathlib import Path

from daemon.memory.roots import is_in_worktree, project_root_of


def instructions_for(project_dir: Path | None, explicit_project: bool) -> str:
    """The server's instructions for a client started in `project_dir` (None: no project)."""
    if project_dir is None:
        where = "the global memory tree"
    else:
        project = project_root_of(project_dir)
        if explicit_project or is_in_worktree(project):
            where = f"this project ({project}) and the global tree"
        else:
            where = f"the global tree ({project} is not a git worktree: save with scope=\"global\")"
    return (
        "memoryd is the long-term memory of your coding sessions: decisions, facts, gotchas, lessons "
        f"and notes of past sessions, for {where}.\n"
        "- At the start of a task, call recall with a few words naming it (files, tools, errors), "
        "and check for lessons before retrying an approach that may have failed before.\n"
        "- As they emerge, remember what a later session needs: decisions and why, gotchas, lessons "
        "(what failed or worked, and why), preferences. One memory per item with a short, specific "
        "title; saving the same title again updates it.\n"
        '- scope="global" only for facts true for every project on this machine.\n'
        "- Never save credentials (keys, tokens, passwords): they are refused. Say where the secret "
        "lives instead (e.g. 'the key is in $OPENAI_API_KEY').\n"
        "- recall shows previews; inspect(id) shows a whole memory.\n"
        "- In OpenCode 2 these tools are reached only through its `execute` tool, as JavaScript: "
        '`return await tools.memoryd.recall({query: "deploy lockfile"})`, '
        '`await tools.memoryd.remember({kind: "lesson", title: "…", body: "…"})`; '
        "elsewhere they are plain tools (OpenCode 1: memoryd_recall, memoryd_remember …)."
    )

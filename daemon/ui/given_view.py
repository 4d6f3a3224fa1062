"""What a session was given: the blocks the daemon served (service.given), each item with
why it is there, and "try a prompt": the block a new session in a project would get now.

The recorded block is shown byte for byte as served. Why a memory is in it comes from
the part of the block it sits in (hard rules, routing, inventory: fixed rules) and, for
those chosen for the prompt, from the ranking's own evidence (its score and the share
of the prompt the memory covers), computed now against the current trees.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from daemon.ui.browse import PAGE_SIZE, clamp_page
from daemon.ui.render import query_words

if TYPE_CHECKING:
    from daemon.memory.workspace import Workspace
    from daemon.ui.viewer import Viewer

MAX_PROMPT = 8000
_ID = re.compile(r"\bid ([0-9A-Za-z_.:-]{1,200})\)")


@dataclass(frozen=True)
class Item:
    """One line of a block and why it is there."""

    line: str
    section: str
    reason: str
    memory_id: str | None
    evidence: dict[str, Any] | None = None


def _reason(section: str) -> str:
    from daemon.memory.context import RELEVANT_HEADING

    if section.startswith("## Hard rules (project"):
        return "A hard rule of this project: every session in it is given its hard rules."
    if section.startswith("## Hard rules"):
        return "A global hard rule: every session is given it."
    if section.startswith("## Where to look"):
        return "The project's routing (ROOT.md scenarios); those the prompt names come first."
    if section.startswith("## Memories"):
        return (
            "Inventory: this project's lessons and gotchas first, then its other memories, then "
            "machine-wide ones, then sessions; newest first in each, within the inventory's budget."
        )
    if section.startswith(RELEVANT_HEADING):
        return "Chosen for the first prompt by the relevance ranking."
    return ""


def explain_block(block: str, evidence: dict[str, dict[str, Any]]) -> list[Item]:
    """The block's memory lines, each with the rule (or the ranking evidence) that put it there."""
    from daemon.memory.context import RELEVANT_HEADING

    items: list[Item] = []
    section = ""
    for line in block.splitlines():
        if line.startswith("## "):
            section = line
            continue
        if not line.startswith("- "):
            continue
        found = _ID.findall(line)
        memory_id = found[-1] if found else None
        ranked = evidence.get(memory_id or "") if section.startswith(RELEVANT_HEADING) else None
        items.append(Item(line, section, _reason(section), memory_id, ranked))
    return items


def _roots(ws: Workspace) -> list[Any]:
    """The roots a block for this workspace is built from (as `context_payload` takes them)."""
    roots = [r for r in ws.roots("all") if r.exists()]
    if ws.project is not None and not any(r.scope == "project" for r in roots):
        roots.append(ws.project)
    return roots


def ranking_evidence(ws: Workspace, prompt: str, k: int, now: datetime) -> dict[str, dict[str, Any]]:
    """memory id → the ranking's evidence for it (score, share of the prompt it covers)."""
    from daemon.memory import relevance
    from daemon.memory.context import PROMPT_CHARS
    from daemon.memory.prompt_terms import searched_part
    from daemon.memory.roots import project_of_root

    if not prompt.strip() or k < 1:
        return {}
    roots = _roots(ws)
    project = next((project_of_root(r) for r in roots if r.scope == "project"), "")
    found = relevance.relevant_hits(ws.index, roots, searched_part(prompt, PROMPT_CHARS), now, k, project=project)
    return {
        s.hit.memory.id: {"rank": n, "score": round(s.score, 3), "coverage": round(s.coverage * 100)}
        for n, s in enumerate(found, 1)
    }


def _try(viewer: Viewer, project: str, prompt: str) -> dict[str, Any]:
    from daemon.memory.context import context_payload

    settings = viewer.config().settings
    ws = viewer.workspace(project or None)
    now = viewer.clock()
    payload = context_payload(ws, settings.inject, Path(project) if project else None, prompt, now)
    evidence = ranking_evidence(ws, prompt, settings.inject.recall_k, now)
    return {"payload": payload, "items": explain_block(payload.get("block", ""), evidence)}


async def given(viewer: Viewer, request: Request) -> Response:
    """The recent sessions' blocks, and the "try a prompt" form (with its answer, if asked)."""
    from daemon.service.given import read_given

    viewer.refresh()
    number = clamp_page(request.query_params.get("page"))
    recorded = read_given(viewer.config().paths.state_dir, PAGE_SIZE + 1, (number - 1) * PAGE_SIZE)
    for n, entry in enumerate(recorded):
        entry["number"] = (number - 1) * PAGE_SIZE + n
        entry["when"] = datetime.fromtimestamp(float(entry.get("at") or 0), UTC)
    from daemon.memory.workspace import MemoryCommandError

    project = request.query_params.get("project", "")[:4096]
    prompt = request.query_params.get("prompt", "")[:MAX_PROMPT]
    tried, error = None, ""
    if "prompt" in request.query_params:
        try:
            tried = _try(viewer, project, prompt)
        except MemoryCommandError as exc:
            error = str(exc)
    projects = [p for p, _ in viewer.browser.projects() if p]
    return viewer.page(
        request, "given.html", recorded=recorded[:PAGE_SIZE], has_next=len(recorded) > PAGE_SIZE, number=number,
        project=project, prompt=prompt, tried=tried, error=error, projects=projects, words=query_words(prompt),
    )  # fmt: skip


async def given_one(viewer: Viewer, request: Request) -> Response:
    """One recorded block, exactly as served, each line with why it is there."""
    from daemon.memory.workspace import MemoryCommandError
    from daemon.service.given import read_given

    number = request.path_params["number"]
    found = read_given(viewer.config().paths.state_dir, 1, number) if 0 <= number < 100_000 else []
    if not found:
        return viewer.page(request, "error.html", 404, message="No such recorded block (the record keeps the latest).")
    entry = found[0]
    entry["when"] = datetime.fromtimestamp(float(entry.get("at") or 0), UTC)
    prompt = str(entry.get("prompt") or "")
    settings = viewer.config().settings
    try:
        ws = viewer.workspace(str(entry.get("dir") or "") or None)
        evidence = ranking_evidence(ws, prompt, settings.inject.recall_k, viewer.clock())
    except MemoryCommandError:  # the session's folder is gone: the block still shows
        evidence = {}
    items = explain_block(entry["block"], evidence)
    return viewer.page(request, "given_one.html", entry=entry, items=items, words=query_words(prompt))

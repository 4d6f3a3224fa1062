"""Pure: OpenCode 2 `session_message` rows → messages and parts of the 1.x shape.

The transcript reads one vocabulary of parts (OpenCode 1.x's): text, reasoning, tool
(`tool`, `state.status/input/output/error/metadata`), file, patch, compaction, agent,
and `mention` (a one-line note this module makes for rows 1.x has no part for).
Tool names stay as OpenCode 2 wrote them (`shell`, `subagent`, …); the transcript
treats both spellings alike. A row whose JSON cannot be read is passed on as raw bytes,
so the transcript reports and skips it as it does a bad 1.x part.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from daemon.opencode import jsonrow
from daemon.source import MessageRow, PartRow

# A text file attached with `opencode run --file` is inlined into the prompt.
_INLINED_FILE = re.compile(r'<file name="([^"]+)"')
_ROLES = {"assistant": "assistant", "compaction": "assistant"}


def _text_of(content: object) -> str:
    """A tool result's `content[]` (text items, files named) as one string."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else json.dumps(content, ensure_ascii=False)
    out = []
    for item in content:
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            out.append(item["text"])
        elif isinstance(item, dict):
            out.append(f"[{item.get('type', 'item')} {item.get('name') or item.get('mime') or ''}]".replace(" ]", "]"))
    return "\n".join(out)


def _tool(item: dict) -> dict:
    state = item.get("state") if isinstance(item.get("state"), dict) else {}
    error = state.get("error")
    if isinstance(error, dict):
        error = error.get("message") or json.dumps(error, ensure_ascii=False)
    part = {
        "type": "tool",
        "tool": str(item.get("name", "?")),
        "callID": item.get("id", ""),
        "state": {
            "status": state.get("status", ""),
            "input": state.get("input", {}),
            "output": _text_of(state.get("content")),
            "metadata": state.get("metadata") if isinstance(state.get("metadata"), dict) else {},
        },
    }
    if error:
        part["state"]["error"] = error
    return part


def _assistant(data: dict) -> list[dict]:
    parts: list[dict] = []
    content = data.get("content")
    for item in content if isinstance(content, list) else []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "tool":
            parts.append(_tool(item))
        elif kind in ("text", "reasoning"):
            parts.append({"type": kind, "text": item.get("text", "")})
        else:
            parts.append(item)  # a kind this module does not know: the transcript says so
    snapshot = data.get("snapshot")
    files = snapshot.get("files") if isinstance(snapshot, dict) else None
    if isinstance(files, list) and files:
        parts.append({"type": "patch", "files": files})
    return parts


def _user(data: dict) -> list[dict]:
    text = data.get("text") if isinstance(data.get("text"), str) else ""
    parts: list[dict] = [{"type": "text", "text": text}] if text else []
    parts += [{"type": "file", "filename": name} for name in _INLINED_FILE.findall(text)]
    files = data.get("files")
    for f in files if isinstance(files, list) else []:
        if isinstance(f, dict):
            source = f.get("source") if isinstance(f.get("source"), dict) else {}
            parts.append({"type": "file", "filename": f.get("name") or source.get("path") or f.get("mime", "")})
    return parts


def _compaction(data: dict) -> list[dict]:
    if data.get("status") != "completed":
        return []  # a failed attempt changed nothing
    summary = data.get("summary")
    return [{"type": "compaction"}] + ([{"type": "text", "text": summary}] if isinstance(summary, str) else [])


def _mention(text: str) -> list[dict]:
    return [{"type": "mention", "text": text}]


def _shell(data: dict) -> list[dict]:
    """A command the user ran (`!cmd`): a tool call of the user's."""
    output = data.get("output")
    state = {
        "status": str(data.get("status", "")),
        "input": {"command": data.get("command", "")},
        "output": output if isinstance(output, str) else _text_of(output),
    }
    return [{"type": "tool", "tool": "shell", "state": state}]


def _switched(kind: str, data: dict) -> list[dict]:
    if kind == "agent-switched":
        return [{"type": "agent", "name": data.get("agent", "?")}]
    if kind == "model-switched":
        model = data.get("model") if isinstance(data.get("model"), dict) else {}
        return _mention(f"switched model to {model.get('providerID', '?')}/{model.get('id', '?')}")
    location = data.get("location") if isinstance(data.get("location"), dict) else {}
    return _mention(f"moved to {location.get('directory', '?')}")


def _parts(kind: str, data: dict) -> list[dict]:
    if kind == "assistant":
        return _assistant(data)
    if kind == "user":
        return _user(data)
    if kind == "synthetic":
        text = data.get("text")
        return [{"type": "text", "text": text, "synthetic": True}] if isinstance(text, str) else []
    if kind == "compaction":
        return _compaction(data)
    if kind == "shell":
        return _shell(data)
    if kind == "skill":
        return _mention(f"loaded skill {data.get('name') or data.get('skill') or '?'}")
    if kind == "system":
        return _mention(f"system: {data.get('description') or data.get('text') or ''}".strip())
    if kind in ("agent-switched", "model-switched", "location-switched"):
        return _switched(kind, data)
    if kind == "idle":
        return []  # the turn ended: the reader's `ended`, nothing to say
    return [{"type": kind}]  # unknown: the transcript warns and skips it


def normalise(rows: Iterable[tuple[str, str, int, bytes]]) -> tuple[list[MessageRow], list[PartRow]]:
    """Rows (id, type, time_created, data) in `seq` order → (messages, parts) in order."""
    messages: list[MessageRow] = []
    parts: list[PartRow] = []
    for row_id, kind, created, raw in rows:
        messages.append(MessageRow(row_id, int(created), {"role": _ROLES.get(kind, "user")}))
        try:
            data = jsonrow.loads(raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw)
        except (ValueError, TypeError):
            data = None
        if not isinstance(data, dict):
            parts.append(PartRow(row_id, row_id, raw))  # the transcript reports it
            continue
        for n, part in enumerate(_parts(str(kind), data)):
            parts.append(PartRow(f"{row_id}:{n:03d}", row_id, part))
    return messages, parts

"""Pure: one session's rows → a bounded, scrubbed, role-labelled transcript.

What each part type becomes (DESIGN.md): text is kept and bounded; reasoning becomes at
most a short hint, never the thought; a tool call is its name, bounded input and bounded
output (an error keeps its error); step markers are dropped; the rest is a one-line
mention. Secrets are redacted *before* anything is clipped, so a clip can never leave
half a key behind.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace

from daemon.capture.distill.base import TOOL_ALIASES, Entry, Transcript
from daemon.opencode import jsonrow
from daemon.opencode.reader import SessionInfo, SessionRows
from daemon.scrub import redact

HASH_SCHEME = "sha256:t1"  # bump the tag when the transcript format changes
DROPPED_TYPES = frozenset({"step-start", "step-finish", "snapshot"})
TRUNCATION_MARKER = "\n\n[… {n} characters of the middle of this session omitted …]\n\n"


@dataclass(frozen=True)
class Limits:
    total: int = 18_000
    head: int = 6_000
    part_text: int = 4_000
    tool_input: int = 600
    tool_output: int = 1_500
    reasoning_hint: int = 0

    @classmethod
    def from_settings(cls, capture: object) -> Limits:
        return cls(
            total=capture.transcript_chars,  # type: ignore[attr-defined]
            head=capture.transcript_head_chars,  # type: ignore[attr-defined]
            part_text=capture.part_text_chars,  # type: ignore[attr-defined]
            tool_input=capture.tool_input_chars,  # type: ignore[attr-defined]
            tool_output=capture.tool_output_chars,  # type: ignore[attr-defined]
            reasoning_hint=capture.reasoning_hint_chars,  # type: ignore[attr-defined]
        )


def clip(text: str, limit: int, tail_share: float = 0.0) -> str:
    """Return `text` cut to about `limit` characters with a visible marker.

    `tail_share` of the budget comes from the end (logs end in their error).
    """
    if len(text) <= limit:
        return text
    tail = int(limit * tail_share)
    head = limit - tail
    omitted = len(text) - head - tail
    marker = f" …[{omitted} chars omitted]… "
    return text[:head] + marker + (text[-tail:] if tail else "")


def scrub_clip(text: str, limit: int, tail_share: float = 0.0) -> str:
    """Redact then clip, redacting only a window around what is kept (fast on 10 MB)."""
    if len(text) > 4 * limit + 200:
        # Pre-cut to a window well wider than what survives: a secret cut at the
        # window's edge is outside the final clip, so it cannot survive half-redacted.
        text = clip(text, 4 * limit, tail_share)
    return clip(redact(text), limit, tail_share)


def _decode(raw: bytes | str | dict, where: str, warnings: list[str]) -> dict | None:
    if isinstance(raw, dict):  # a source that normalised its rows (OpenCode 2's)
        return raw
    if isinstance(raw, str):
        text = raw
    else:
        text = raw.decode("utf-8", errors="replace")
        if "\ufffd" in text and b"\xef\xbf\xbd" not in raw:
            warnings.append(f"{where}: data is not valid UTF-8; undecodable bytes replaced")
    try:
        value = jsonrow.loads(text)
    except json.JSONDecodeError as exc:
        warnings.append(f"{where}: malformed JSON in data ({exc.msg} at char {exc.pos}); row skipped")
        return None
    if not isinstance(value, dict):
        warnings.append(f"{where}: data is {type(value).__name__}, not an object; row skipped")
        return None
    return value


def _bounded_input(value: object, limit: int) -> dict:
    """Tool input with every string value scrubbed and bounded."""
    if not isinstance(value, dict):
        return {"value": scrub_clip(str(value), limit)}
    out: dict = {}
    for key, item in value.items():
        if isinstance(item, str):
            out[str(key)] = scrub_clip(item, limit)
        else:
            out[str(key)] = scrub_clip(json.dumps(item, ensure_ascii=False), limit)
    return out


def _tool_entry(role: str, data: dict, limits: Limits) -> Entry:
    state = data.get("state") if isinstance(data.get("state"), dict) else {}
    status = str(state.get("status", ""))
    output = state.get("output", "")
    metadata = state.get("metadata") if isinstance(state.get("metadata"), dict) else {}
    if output in ("", None) and metadata.get("output") not in ("", None):
        # Some tools (bash while streaming, some OpenCode releases) leave the final
        # output empty and keep what was printed in metadata.output.
        output = metadata["output"]
    if not isinstance(output, str):
        output = json.dumps(output, ensure_ascii=False)
    exit_status = metadata.get("exit")  # OpenCode 1.18 and 2.0 both store a shell command's here
    error = state.get("error", "")
    if not isinstance(error, str):
        error = json.dumps(error, ensure_ascii=False)
    return Entry(
        role=role,
        kind="tool",
        tool=TOOL_ALIASES.get(str(data.get("tool", "?")), str(data.get("tool", "?"))),
        input=_bounded_input(state.get("input", {}), limits.tool_input),
        output=scrub_clip(output, limits.tool_output, tail_share=0.67),
        status=status,
        error=scrub_clip(error, limits.tool_output, tail_share=0.5),
        exit=exit_status if isinstance(exit_status, int) and not isinstance(exit_status, bool) else None,
    )


def _mention(ptype: str, data: dict) -> str | None:
    """One line for the part types that are worth a mention, or None."""
    if ptype == "file":
        return f"attached file {data.get('filename') or data.get('url', '')}".strip()
    if ptype == "patch":
        files = data.get("files")
        if not isinstance(files, list) or not files:
            return None
        return "changed files: " + ", ".join(str(f) for f in files[:20])
    if ptype == "agent":
        return f"switched to agent @{data.get('name', '?')}"
    if ptype == "subtask":
        return f"subtask for @{data.get('agent', '?')}: {data.get('description', '')}".strip()
    if ptype == "compaction":
        return "context was compacted here"
    if ptype == "mention":  # a source's one-line note (OpenCode 2's skill, system, switch rows)
        return str(data.get("text", "")) or None
    if ptype == "retry":
        err = data.get("error")
        msg = err.get("message") if isinstance(err, dict) else err
        return f"model call retried (attempt {data.get('attempt', '?')}): {msg or ''}".strip()
    return None


def build_entries(rows: SessionRows, limits: Limits) -> tuple[list[Entry], list[str]]:
    """Return the kept entries of a session, in order, and warnings about bad rows."""
    warnings: list[str] = []
    sid = rows.session.id
    roles: dict[str, str] = {}
    for message in rows.messages:
        data = _decode(message.data, f"session {sid} message {message.id}", warnings)
        roles[message.id] = str(data.get("role", "unknown")) if data else "unknown"
    entries: list[Entry] = []
    for part in rows.parts:
        where = f"session {sid} part {part.id}"
        data = _decode(part.data, where, warnings)
        if data is None:
            continue
        role = roles.get(part.message_id, "unknown")
        ptype = data.get("type")
        if not isinstance(ptype, str):
            warnings.append(f"{where}: part type {ptype!r} is not a name; skipped")
            continue
        if ptype in DROPPED_TYPES:
            continue
        if ptype == "text":
            text = data.get("text")
            if role == "user" and isinstance(text, str):
                text = jsonrow.unquote_prompt(text.strip())  # OpenCode 1.x and 2 store `run "…"` as a JSON literal
            if isinstance(text, str) and text.strip() and not data.get("ignored"):
                entries.append(Entry(role, "text", text=scrub_clip(text.strip(), limits.part_text, 0.3)))
        elif ptype == "reasoning":
            # The thought itself is private: at most a short, scrubbed hint.
            text = data.get("text") if isinstance(data.get("text"), str) else ""
            hint = scrub_clip(text.strip(), limits.reasoning_hint) if limits.reasoning_hint else ""
            entries.append(Entry(role, "reasoning", text=hint))
        elif ptype == "tool":
            entries.append(_tool_entry(role, data, limits))
        else:
            line = _mention(ptype, data)
            if line is not None:
                entries.append(Entry(role, "mention", text=scrub_clip(line, limits.tool_input)))
            elif ptype not in ("file", "patch", "agent", "subtask", "compaction", "retry", "mention"):
                warnings.append(f"{where}: unknown part type {ptype!r}; skipped")
    return entries, warnings


def _format_input(tool: str, data: dict) -> str:
    for key in ("command", "filePath", "path", "pattern", "url", "description"):
        if key in data:
            extra = {k: v for k, v in data.items() if k not in (key, "description")}
            head = f"{key}={data[key]}"
            return head + (" " + json.dumps(extra, ensure_ascii=False) if extra else "")
    return json.dumps(data, ensure_ascii=False)


def render_entry(entry: Entry) -> str:
    """One entry as transcript text."""
    if entry.kind == "text":
        return f"[{entry.role}] {entry.text}"
    if entry.kind == "reasoning":
        return f"[{entry.role} · reasoning] {entry.text or '(private reasoning omitted)'}"
    if entry.kind == "mention":
        return f"[{entry.role} · note] {entry.text}"
    lines = [f"[{entry.role} · tool {entry.tool}] {_format_input(entry.tool, entry.input)}"]
    if entry.status == "error":
        lines.append(f"  ✗ error: {entry.error}")
    elif entry.output:
        lines.append("  → " + entry.output.replace("\n", "\n    "))
    elif entry.status and entry.status != "completed":
        lines.append(f"  ({entry.status})")
    return "\n".join(lines)


def bound_transcript(text: str, total: int, head: int) -> str:
    """Keep the first `head` and the last `total - head` characters, marking the cut."""
    if len(text) <= total:
        return text
    tail = total - head
    omitted = len(text) - total
    return text[:head] + TRUNCATION_MARKER.format(n=omitted) + text[len(text) - tail :]


def scrubbed_session(session: SessionInfo) -> SessionInfo:
    """The session with its title scrubbed, once (a source gives it as stored)."""
    if session.scrubbed:
        return session
    return replace(session, title=redact(session.title), scrubbed=True)


def transcript_hash(text: str) -> str:
    return f"{HASH_SCHEME}:{hashlib.sha256(text.encode('utf-8')).hexdigest()}"


def build_transcript(rows: SessionRows, limits: Limits = Limits()) -> Transcript:
    """Return the bounded transcript of one session (pure: rows in, text out).

    Its `session` is the rows' with the title scrubbed (and marked so): what capture
    writes of the session from then on needs no second pass.
    """
    entries, warnings = build_entries(rows, limits)
    s: SessionInfo = scrubbed_session(rows.session)
    header = f"# Session: {s.title or s.id}\nDirectory: {s.directory}\n"
    body = "\n\n".join(render_entry(e) for e in entries)
    text = bound_transcript(header + "\n" + body, limits.total, limits.head)
    return Transcript(
        session=s,
        entries=tuple(entries),
        text=text,
        hash=transcript_hash(text),
        warnings=tuple(warnings),
    )

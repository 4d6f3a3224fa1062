"""Gather what `memoryd status` reports, whether or not the daemon runs."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from daemon.config import Config, Paths, Settings
from daemon.timefmt import iso

STATUS_BUSY_MS = 1000


def gather(config: Config, clock: Callable[[], float] = time.time, here: Path | None = None) -> dict[str, Any]:
    """Return the status as plain data (printed as text or as --json); `here` is the
    caller's folder, whose project tree is shown even before a session there was captured."""
    from daemon.service.lock import read_lock
    from daemon.diskfull import DiskFull
    from daemon.state import StateDB, StateUnusable

    settings, paths = config.settings, config.paths
    now = clock()
    out: dict[str, Any] = {"paths": {
        "config": str(paths.config_file),
        "opencode_db": str(paths.opencode_db),
        "state_dir": str(paths.state_dir),
        "log": str(paths.log_file),
        "global_root": str(paths.global_root),
    }}
    lock = read_lock(paths.lock_file)
    started = lock.started if lock else None
    uptime = lock.uptime(datetime.now(timezone.utc)) if lock and started and started.tzinfo else None
    out["daemon"] = {
        "running": bool(lock and lock.alive),
        "pid": lock.pid if lock and lock.alive else None,
        "uptime_s": int(uptime.total_seconds()) if uptime else None,
    }

    out["opencode"] = _opencode(paths, out["daemon"]["running"])
    out["agents"] = _agents(config)

    out["here"] = _here(config, here) if here is not None else None
    out["source"], newest = _source(config)
    if not paths.state_db.exists():
        out["state"] = None
        out["memory"] = _memory_roots(config, None, here)  # trees (and their problems) before any pass
        return out
    try:
        state = StateDB(paths.state_db)
    except StateUnusable as exc:
        out["state"] = {"unusable": f"{exc}; the daemon (or `memoryd distill`) moves it aside and starts afresh"}
        return out
    except DiskFull as exc:
        out["state"] = {"unusable": str(exc), "disk_full": True}
        return out
    try:
        # What the running daemon found reading it (damage inside a valid header shows
        # only there): "<time> <error>", cleared by the next good pass of any process.
        seen = state.get_meta("source_error") if out["daemon"]["running"] else ""
        if seen and out["source"].get("ok"):
            at, _, error = seen.partition(" ")
            out["source"] = {"ok": False, "error": f"{error} (the daemon, since {at}; retried with backoff)"}
        out["state"] = _state(settings, state, newest, now)
        out["model"] = _model(settings, state, clock)
        out["sink"] = _sink(settings, state)
        out["memory"] = _memory_roots(config, state, here)
    finally:
        state.close()
    out["checked_at"] = iso(int(now * 1000))
    return out


def _agents(config: Config) -> dict[str, Any]:
    from daemon.agentstatus import gather_agents
    from daemon.state import StateDB, StateUnusable

    last_pass = 0
    if config.paths.state_db.exists():
        try:
            state = StateDB(config.paths.state_db)
        except StateUnusable:
            state = None
        if state is not None:
            last_pass = int(state.get_meta("last_pass", "0"))
            state.close()
    return gather_agents(config, last_pass)


def _source(config: Config) -> tuple[dict[str, Any], int | None]:
    """Whether OpenCode's database can be read, and its newest row (epoch ms)."""
    from daemon.opencode.reader import OpenCodeReader, SourceError, unreadable

    settings, paths = config.settings, config.paths
    try:
        # A status answers at once: a database held locked is said to be busy after a second.
        with OpenCodeReader(paths.opencode_db, min(settings.source.busy_timeout_ms, STATUS_BUSY_MS)) as reader:
            newest = reader.newest_update()
            tables = reader.describe()
    except SourceError as exc:
        return {"ok": False, "error": str(exc)}, None
    except sqlite3.DatabaseError as exc:
        return {"ok": False, "error": str(unreadable(paths.opencode_db, exc))}, None
    return {"ok": True, "newest_row": iso(newest) if newest else None, **tables}, newest


def _state(settings: Settings, state: Any, newest: int | None, now: float) -> dict[str, Any]:
    """What the state database says: progress, sessions by status, the hold, errors."""
    from daemon.capture.lifecycle import session_counts

    watermark = state.watermark
    last_pass = int(state.get_meta("last_pass", "0"))
    records = state.records()  # read once for the counts and lists below
    stale = _stale(settings, [r for r in records if r.status == "distilled"])
    by_id = {r.session_id: r for r in records}
    return {
        "watermark": iso(watermark) if watermark else None,
        "lag_s": round((newest - watermark) / 1000, 1) if newest and watermark and newest > watermark else 0,
        "last_pass": iso(last_pass) if last_pass else None,
        "last_sweep": state.get_meta("last_sweep") or None,
        "sessions": session_counts(state),
        "needs_upgrade": sum(1 for r in records if r.needs_upgrade),
        "stale": stale,  # made by another model or prompt version: `memoryd distill --redistill-stale`
        "hold": _hold(state, now),
        "rebuilt": [note for note in (state.get_meta("rebuilt"), state.get_meta("index_rebuilt")) if note],
        "pending": [
            {"session_id": r.session_id, "title": r.title, "status": r.status, "last_error": r.last_error,
             "retry_at": iso(r.retry_at) if r.retry_at else None}
            for r in records if r.status in ("held", "retry")
        ][:10],
        "failed": [
            {"session_id": r.session_id, "title": r.title, "last_error": r.last_error}
            for r in state.records("failed")[:10]
        ],
        "errors": [
            {"time": iso(e["time"]), "session_id": e["session_id"], "message": e["message"],
             "holds": _error_holds(e["session_id"], by_id)}
            for e in state.recent_errors(5)
        ],
    }


def _error_holds(session_id: str, by_id: dict[str, Any]) -> bool | None:
    """Whether a session's error still holds: not once the session got its note (or junk
    verdict) since; None for an error of no session (it cannot be told)."""
    if not session_id:
        return None
    from daemon.capture.lifecycle import DONE

    record = by_id.get(session_id)
    return record is None or record.status not in DONE


def _hold(state: Any, now: float) -> dict[str, Any] | None:
    """The stop that keeps the daemon from calling the model, while it lasts."""
    from daemon.capture.lifecycle import hold_in_force

    hold = hold_in_force(state, now * 1000)
    if hold is None:
        return None
    return {"reason": hold.reason, "message": hold.message, "until": iso(hold.until_ms)}


def _stale(settings: Settings, distilled: list[Any]) -> int:
    """Notes made by another model or prompt than the configured one (fallback notes aside)."""
    if settings.llm.provider == "extractive":
        return 0  # without a model nothing is stale (daemon.capture.lifecycle.is_stale)
    from daemon.capture.distill.factory import distiller_identity
    from daemon.capture.lifecycle import Identity, is_stale

    identity = Identity(*distiller_identity(settings.llm))
    return sum(1 for r in distilled if is_stale(r, identity) and not r.needs_upgrade)


def _opencode(paths: Paths, running: bool) -> dict[str, Any]:
    """Is memoryd installed in OpenCode, and does the daemon answer the plugin?"""
    from daemon.opencode.install import config_dir, describe_install, install_status
    from daemon.service.context_server import request

    state = install_status(config_dir())
    answering = False
    if running and paths.socket_file.exists():
        try:
            answering = request(paths.socket_file, "GET", "/health", timeout=1.0)[0] == 200
        except OSError:
            answering = False
    return {
        "plugin": str(state.plugin),
        "plugin_installed": state.plugin_installed,
        "plugin_outdated": state.plugin_outdated,
        "mcp_registered": state.mcp_registered,
        "socket": str(paths.socket_file),
        "socket_answering": answering,
        "lines": describe_install(state),
    }


def _sink(settings: Settings, state: Any) -> dict[str, Any] | None:
    from daemon.sinks.run import local_status

    return local_status(settings, state)


def _sink_lines(sink: dict[str, Any] | None) -> list[str]:
    if not sink:
        return []
    from daemon.sinks.run import format_local

    return format_local(sink)


def _model(settings: Settings, state: Any, clock: Callable[[], float]) -> dict[str, Any]:
    from daemon.capture.distill.budget import Budget

    llm = settings.llm
    spend = Budget.from_settings(state, llm, clock).today()
    out = {
        "provider": llm.provider,
        "model": llm.model or None,
        "calls_today": spend.calls,
        "tokens_today": spend.tokens,
        "daily_call_budget": llm.daily_call_budget or None,
        "daily_token_budget": llm.daily_token_budget or None,
        "fallback": llm.fallback,
    }
    out["budget_spent"] = bool(
        (llm.daily_call_budget and spend.calls >= llm.daily_call_budget)
        or (llm.daily_token_budget and spend.tokens >= llm.daily_token_budget)
    )
    return out


def _here(config: Config, here: Path) -> dict[str, Any] | None:
    """The project tree the caller's folder would use, and where its sessions' notes go."""
    from daemon.memory.roots import is_in_worktree, project_root_of, project_tree

    if not is_in_worktree(here):
        return None
    tree = project_tree(here, config.settings.memory.follow_outside_links)
    target = config.settings.notes.target
    exists = tree.exists()
    notes_go = "project" if target == "project" or (target == "auto" and exists) else "global"
    return {"worktree": str(project_root_of(here)), "tree": str(tree.path), "exists": exists,
            "notes_go_to": "global" if tree.outside else notes_go, "target": target, "refused": bool(tree.outside)}


def _memory_roots(config: Config, state: Any, here: Path | None = None) -> list[dict[str, Any]]:
    """Each memory tree memoryd knows, with its number of memories and problems (from the index)."""
    from daemon.memory.index import SearchIndexError, open_index
    from daemon.memory.roots import known_roots, refused_roots

    # With the caller's own project, captured yet or not.
    dirs = [here] if here is not None else []
    rows: list[dict[str, Any]] = [
        {"scope": r.scope, "path": str(r.path), "memories": 0, "problems": [r.warning()], "problems_total": 1,
         "refused": str(r.outside)}
        for r in refused_roots(config, state, dirs)
    ]
    roots = known_roots(config, state, dirs)
    if not roots:
        return rows
    try:
        index = open_index(config)
    except SearchIndexError as exc:
        return rows + [
            {"scope": r.scope, "path": str(r.path), "memories": 0, "problems": [str(exc)], "problems_total": 1}
            for r in roots
        ]
    with index:
        for root in roots:
            index.sync_root(root)
            problems = index.problems(root)
            rows.append(
                {
                    "scope": root.scope,
                    "path": str(root.path),
                    "memories": index.count([root]),
                    "problems": [str(p) for p in problems[:5]],  # the first few…
                    "problems_total": len(problems),  # …of this many
                }
            )
    return rows


def format_status(data: dict[str, Any]) -> str:
    """The status as text a person reads top to bottom."""
    lines: list[str] = []
    d = data["daemon"]
    if d["running"]:
        up = f", up {_duration(d['uptime_s'])}" if d["uptime_s"] is not None else ""
        lines.append(f"memoryd is running (pid {d['pid']}{up}).")
    else:
        lines.append("memoryd is not running. Start it with `memoryd run` or `memoryd service install`.")
    oc = data["opencode"]
    lines.extend(f"OpenCode {line}" for line in oc["lines"])
    if d["running"] and oc["plugin_installed"] and not oc["socket_answering"]:
        lines.append(f"  the daemon does not answer on {oc['socket']}: sessions fall back to `memoryd context`")
    from daemon.agentstatus import agent_lines

    lines.extend(agent_lines(data.get("agents") or {}))
    src = data["source"]
    if src["ok"]:
        lines.append(f"OpenCode database: {data['paths']['opencode_db']} (newest row {src['newest_row'] or '—'})")
        lines.extend(_family_lines(src))
    else:
        lines.append(f"OpenCode database: {src['error']}")
    st = data.get("state")
    if st is None:
        lines.append("No capture pass has run yet: run `memoryd distill`.")
        lines.extend(_memory_lines(data.get("memory", [])))
    elif "unusable" in st:
        lines.append(f"State database: {st['unusable']}")
    else:
        lines.extend(_session_lines(st))
        lines.append(_model_line(data["model"]))
        lines.extend(_sink_lines(data.get("sink")))
        lines.append(f"Last sweep: {st['last_sweep'] or 'never'}")
        lines.extend(_memory_lines(data.get("memory", [])))
        if st["errors"]:
            lines.append("Recent errors:")
            for e in st["errors"]:
                sid = f" [{e['session_id']}]" if e["session_id"] else ""
                over = " (over: the session has its note since)" if e.get("holds") is False else ""
                lines.append(f"  {e['time']}{sid} {e['message'][:200]}{over}")
    lines.extend(_here_lines(data.get("here")))
    lines.append(f"Logs: {data['paths']['log']} (`memoryd logs -f`)")
    return "\n".join(lines)


def _family_lines(src: dict[str, Any]) -> list[str]:
    """Which OpenCode versions' tables the database holds, with their counts."""
    lines = []
    for family in src.get("families", {}).values():
        sub = f" (+{family['subagents']} subagent)" if family["subagents"] == 1 else (
            f" (+{family['subagents']} subagents)" if family["subagents"] else "")
        lines.append(f"  {family['label']}: {family['sessions']} sessions{sub}, {family['messages']} rows")
    if src.get("in_both"):
        lines.append(
            f"  {src['in_both']} sessions are in both (OpenCode 2 copied them); each is read once, "
            "from the version that wrote to it last"
        )
    return lines


def _here_lines(here: dict[str, Any] | None) -> list[str]:
    if here is None or here["refused"]:
        return []  # a refused tree is said once, among the trees
    if here["exists"]:
        return [f"This project ({here['worktree']}): memory tree {here['tree']}"]
    if here["notes_go_to"] == "project":
        return [f"This project ({here['worktree']}): its notes go to {here['tree']}, created with the first one"]
    if here["target"] == "global":
        return [f"This project ({here['worktree']}): notes go to the global tree (notes.target = \"global\")"]
    return [
        f"This project ({here['worktree']}) has no .memory/ folder: its sessions' notes go to the global tree.",
        f"  To give it a tree of its own: mkdir {here['tree']}",
    ]


def _session_lines(st: dict[str, Any]) -> list[str]:
    """Progress, sessions by status, the hold, rebuilt files, what waits and what failed."""
    lag = f", {_duration(st['lag_s'])} behind the newest row" if st["lag_s"] else ", up to date"
    lines = [f"Watermark: {st['watermark'] or 'none yet'}{lag}; last pass {st['last_pass'] or 'never'}"]
    c = st["sessions"]
    lines.append(
        f"Sessions: {c['distilled']} distilled, {c['junk']} junk, {c['settling']} settling, "
        f"{c['held']} held, {c['retry']} to retry, {c['failed']} failed"
        + (f", {st['needs_upgrade']} awaiting a model upgrade" if st["needs_upgrade"] else "")
    )
    if st.get("hold"):
        h = st["hold"]
        lines.append(f"Model calls held until {h['until']} ({h['reason']}): {h['message']}")
    lines.extend(f"Rebuilt: {note}" for note in st.get("rebuilt", []))
    if st.get("stale"):
        lines.append(
            f"  {st['stale']} stale: made by another model or prompt version; "
            "`memoryd distill --redistill-stale` redoes them"
        )
    lines.extend(_pending_lines(st["pending"]))
    for row in st["failed"]:
        lines.append(f"  failed  {row['session_id']} {row['title'][:40]}: {row['last_error']}")
    if st["failed"]:
        lines.append("  A failed session is retried when it changes; `memoryd distill --session ID --force` retries now.")
    return lines


def _model_line(m: dict[str, Any]) -> str:
    if m["provider"] == "extractive":
        return "Distiller: extractive (no model, no spend)."
    cap = []
    if m["daily_call_budget"]:
        cap.append(f"{m['calls_today']}/{m['daily_call_budget']} calls")
    if m["daily_token_budget"]:
        cap.append(f"{m['tokens_today']}/{m['daily_token_budget']} tokens")
    spent = ""
    if m["budget_spent"]:
        spent = " — budget spent: " + (
            "new sessions get extractive notes until tomorrow"
            if m.get("fallback") == "extractive"
            else "sessions wait until tomorrow"
        )
    return (
        f"Distiller: {m['provider']} {m['model'] or ''}; today {m['calls_today']} calls, "
        f"{m['tokens_today']} tokens" + (f" (budget {', '.join(cap)})" if cap else "") + spent
    )


def _memory_lines(roots: list[dict[str, Any]]) -> list[str]:
    lines = []
    for root in roots:
        if root.get("refused"):
            lines.append(f"Memory ({root['scope']}): {root['path']} — not followed: {root['problems'][0]}")
            continue
        lines.append(f"Memory ({root['scope']}): {root['path']} — {root['memories']} memories")
        lines.extend(f"  skipped: {problem}" for problem in root["problems"])
        if root["problems_total"] > len(root["problems"]):
            lines.append(f"  … and {root['problems_total'] - len(root['problems'])} more (`memoryd reindex` lists them all)")
    return lines


def _pending_lines(pending: list[dict[str, Any]]) -> list[str]:
    """Held and retry sessions; a reason several share (a spent budget, a bad key) is said once."""
    reasons: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in pending:
        reasons.setdefault((row["status"], row["last_error"]), []).append(row)
    lines = []
    for (status, reason), rows in reasons.items():
        if len(rows) == 1:
            row = rows[0]
            when = f" (next try {row['retry_at']})" if row.get("retry_at") else ""
            lines.append(f"  {status} {row['session_id']} {row['title'][:40]}{when}: {reason}")
            continue
        lines.append(f"  {status}, because {reason}:")
        lines.extend(f"    {row['session_id']} {row['title'][:40]}" for row in rows)
    return lines


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 7200:
        return f"{seconds // 60}m"
    if seconds < 172800:
        return f"{seconds // 3600}h"
    return f"{seconds // 86400}d"



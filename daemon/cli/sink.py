"""`memoryd sink push | status`: delivery of notes to a Cognee server."""

from __future__ import annotations

import json
from typing import Any

import click

from daemon.cli.app import EXIT_FAILED, AppContext, fail


def _need_sink(app: AppContext) -> None:
    if not app.settings.sinks.cognee.url:
        fail("no sink configured: set [sinks.cognee] url in the config file (see docs/cognee.md)")


@click.group()
def sink() -> None:
    """Deliver notes (and memories) to a Cognee server, and see how far delivery got."""


@sink.command()
@click.option("--all", "everything", is_flag=True, help="Send every document again, delivered or not.")
@click.pass_obj
def push(app: AppContext, everything: bool) -> None:
    """Queue new and changed notes, then deliver the whole outbox now.

    The daemon does this by itself in the background; push backfills by hand (--all
    after the server lost its data) and retries at once what was waiting to retry.

    \b
    Examples:
      memoryd sink push
      memoryd sink push --all
    """
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from daemon.sinks.cognee import SinkError
    from daemon.sinks.run import Sink
    from daemon.state import StateDB

    _need_sink(app)
    app.setup_logging(stderr=False)
    state = StateDB(app.paths.state_db)
    try:
        sink_ = Sink(app.config, state)
    except SinkError as exc:
        state.close()
        fail(str(exc))
    try:
        with Progress(
            TextColumn("delivering"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), transient=True
        ) as bar:
            task = bar.add_task("push", total=None)
            result = sink_.round(
                force=everything, now=True, progress=lambda done, total: bar.update(task, completed=done, total=total)
            )
    finally:
        sink_.close()
        state.close()
    click.echo(
        f"Cognee: {result.added} added, {result.replaced} replaced, {result.deleted} deleted, "
        f"{result.unchanged} already there" + (f", {result.resent} sent again" if result.resent else "")
        + f"; {result.remaining} left in the outbox ({result.seconds:.1f} s)"
    )
    if result.cognify_run:
        click.echo(f"cognify requested (run {result.cognify_run}): `memoryd sink status` shows its progress")
    if result.error:
        click.echo(f"memoryd: delivery stopped: {result.error}\nThe outbox keeps it; the daemon retries with backoff.",
                   err=True)
        raise SystemExit(EXIT_FAILED)


def _remote(app: AppContext) -> dict[str, Any]:
    """What the server says: reachable, documents in the dataset, cognify progress."""
    from daemon.sinks.cognee import CogneeClient, SinkError

    out: dict[str, Any] = {"reachable": False}
    try:
        with CogneeClient(app.settings.sinks.cognee) as client:
            out["health"] = client.health().get("health") or "ok"
            out["reachable"] = True
            dataset_id = client.dataset_id()
            out["dataset_id"] = dataset_id or None
            if dataset_id:
                out["count"] = client.count(dataset_id)
                status = client.processing_status(dataset_id)
                out["cognified"] = {k: status.get(k) for k in ("total", "completed", "pending")}
    except SinkError as exc:
        out["error"] = str(exc)
    return out


@sink.command()
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.pass_obj
def status(app: AppContext, as_json: bool) -> None:
    """Show the outbox (queued, delivered, last error) and what the server holds."""
    from daemon.sinks.run import format_local, local_status
    from daemon.state import StateDB

    _need_sink(app)
    state = StateDB(app.paths.state_db)
    try:
        local = local_status(app.settings, state)
    finally:
        state.close()
    assert local is not None
    data = {"local": local, "server": _remote(app)}
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    lines = format_local(local)
    server = data["server"]
    if not server["reachable"]:
        lines.append(f"Server: unreachable: {server.get('error')}")
    elif server.get("dataset_id") is None:
        lines.append("Server: reachable; the dataset does not exist yet (nothing delivered)")
    else:
        lines.append(f"Server: {server['count']} documents in {local['dataset']}")
        c = server.get("cognified") or {}
        lines.append(f"Cognify: {c.get('completed')} of {c.get('total')} documents processed, {c.get('pending')} pending")
    click.echo("\n".join(lines))


RECALL_TIMEOUT_S = 15.0  # a recall is interactive: do not wait a minute for a busy server


def ask_cognee(app: AppContext, query: str, limit: int) -> dict[str, Any]:
    """The server's search answers for `memoryd recall --cognee`, or the reason there are none."""
    from daemon.sinks.cognee import CogneeClient, SinkError

    config = app.settings.sinks.cognee
    if not config.url:
        return {"answers": [], "error": "no Cognee server configured ([sinks.cognee] url)"}
    try:
        with CogneeClient(config, timeout_s=min(config.timeout_s, RECALL_TIMEOUT_S)) as client:
            return {"answers": client.search(query, limit), "error": None}
    except SinkError as exc:
        return {"answers": [], "error": str(exc)}


def _answer_text(answer: Any) -> str:
    if isinstance(answer, dict):
        for key in ("text", "answer", "content", "search_result"):
            if answer.get(key):
                return _answer_text(answer[key])
    if isinstance(answer, list):
        return " / ".join(_answer_text(a) for a in answer[:3])
    return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)


def format_cognee(found: dict[str, Any]) -> str:
    if found["error"]:
        return f"Cognee: no answer: {found['error']}"
    if not found["answers"]:
        return "Cognee: nothing found."
    lines = ["Cognee:"]
    for number, answer in enumerate(found["answers"], 1):
        text = " ".join(_answer_text(answer).split())
        lines.append(f"{number}. {text[:300]}")
    return "\n".join(lines)

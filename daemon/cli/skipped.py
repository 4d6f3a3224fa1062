"""`memoryd list --junk`: the sessions capture skipped, with the reason, to review."""

from __future__ import annotations

import json

import click

from daemon.cli.app import AppContext


def list_junk(app: AppContext, limit: int | None, as_json: bool) -> None:
    from daemon.capture.skipped import skipped_sessions
    from daemon.state import StateDB

    if not app.paths.state_db.exists():
        click.echo("No sessions captured yet: run `memoryd distill`.")
        return
    state = StateDB(app.paths.state_db)
    try:
        skipped = skipped_sessions(state, app.paths.transcripts_dir, limit)
    finally:
        state.close()
    if as_json:
        click.echo(json.dumps([s.__dict__ for s in skipped], ensure_ascii=False, indent=2))
        return
    if not skipped:
        click.echo("No session was skipped as junk.")
        return
    click.echo(f"{len(skipped)} session(s) skipped as junk (a session is judged again when it changes, "
               "or with `memoryd distill --session ID --force`):")
    for s in skipped:
        click.echo(f"{s.session_id}  {s.judged[:10]}  {s.title or '(untitled)'}  [{s.judged_by}]")
        click.echo(f"    why: {s.reason}" + (f"; asked: {s.asked!r}" if s.asked else ""))

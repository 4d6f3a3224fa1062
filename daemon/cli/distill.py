"""`memoryd distill`: one capture pass, with a progress bar and a summary."""

from __future__ import annotations

import sys
import click

from daemon.cli.app import EXIT_FAILED, EXIT_OK, EXIT_USAGE, AppContext, fail


@click.command()
@click.option("--limit", type=click.IntRange(min=0), help="Do at most N sessions (oldest first).")
@click.option("--offset", type=click.IntRange(min=0), default=0, help="Skip the N oldest sessions first.")
@click.option("--session", "session_id", metavar="ID", help="Only this session (ses_…).")
@click.option("--dry-run", is_flag=True, help="Show what would be distilled; write nothing.")
@click.option(
    "--show",
    is_flag=True,
    help="With --dry-run: print the notes it would write and the lesson, gotcha and decision memories "
    "they would save (a model is called).",
)
@click.option("--force", is_flag=True, help="Redo sessions even if unchanged (costs model calls).")
@click.option("--redistill-stale", is_flag=True, help="Redo only notes made by another model or prompt version.")
@click.option(
    "--settle",
    type=click.FloatRange(min=0),
    help="Seconds a session must be quiet before it is distilled (default: capture.settle_seconds).",
)
@click.option("-v", "--verbose", is_flag=True, help="List every note written.")
@click.pass_obj
def distill(
    app: AppContext,
    limit: int | None,
    offset: int,
    session_id: str | None,
    dry_run: bool,
    show: bool,
    force: bool,
    redistill_stale: bool,
    settle: float | None,
    verbose: bool,
) -> None:
    """Turn new or changed OpenCode sessions into Markdown notes, once.

    Reads OpenCode's database read-only, builds a bounded, scrubbed transcript of
    every session that is new or changed since the last pass, and writes one note
    per session. Unchanged sessions cost nothing; a session still being written
    (updated within the settle time) waits for the next pass.

    \b
    Examples:
      memoryd distill                 # everything new since last time
      memoryd distill --limit 20      # the 20 oldest, e.g. to try it out
      memoryd distill --session ses_… --force
      memoryd distill --dry-run
      memoryd distill --dry-run --show --limit 3   # read the notes first

    Exit status: 0 all well (also when the daily model budget ends the pass), 1 some
    sessions failed or the model server could not be used (bad key, unreachable, …),
    2 bad usage or config.
    """
    from daemon.capture.pipeline import PassOptions

    if show and not dry_run:
        fail("--show prints the notes a --dry-run would write: add --dry-run", EXIT_USAGE)
    if settle is not None:
        app.settings.capture.settle_seconds = settle
    app.make_state_private()  # as `memoryd run` does
    app.setup_logging(stderr=False)
    _mention_running_daemon(app)
    # A manual pass looks at every session (about 0.2 s per 10,000): it also finds edits
    # to old rows that the daemon's quick probes leave to its periodic reconcile.
    options = PassOptions(limit, offset, session_id, force, dry_run, redistill_stale, full_scan=True)
    report, capture = _run_pass(app, options, show)
    _refresh_trees(app, report.roots, report.written)
    _print_report(report, capture, verbose)
    raise SystemExit(EXIT_FAILED if report.exit_code else EXIT_OK)


def _run_pass(app: AppContext, options, show: bool):
    """Open the capturer, run the pass (printing its notes with --show), close it; return
    the report and the capturer. Bad input ends the command with the usage status."""
    import sqlite3

    from daemon.capture.pipeline import open_capturer
    from daemon.config import ConfigError
    from daemon.diskfull import find_disk_full
    from daemon.opencode.reader import SourceError, unreadable

    try:
        capturer = open_capturer(app.config)
    except (SourceError, ConfigError) as exc:
        fail(str(exc), EXIT_USAGE)
    try:
        report = _run_with_progress(capturer, options)
        if show:
            _show_notes(capturer, report.would_distill, app.settings.notes.extract_memories)
    except LookupError as exc:
        fail(str(exc).strip("'\""), EXIT_USAGE)
    except sqlite3.DatabaseError as exc:  # damaged past what opening it could tell
        full = find_disk_full(exc, app.paths.state_dir)
        if full is not None:  # memoryd's own files, not OpenCode's database
            fail(str(full), EXIT_FAILED)
        fail(str(unreadable(app.paths.opencode_db, exc)), EXIT_USAGE)
    finally:
        capturer.close()
    return report, capturer


def _show_notes(capturer, session_ids: list[str], extract_memories: bool) -> None:
    """Each note a pass would write, then the lesson, gotcha and decision memories it would save."""
    from daemon.capture.lessons import statements
    from daemon.capture.preview import preview_notes

    for sid, note in preview_notes(capturer, session_ids):
        click.echo(f"===== {sid} =====\n{note.rstrip()}\n")
        found = statements(note) if extract_memories and note.startswith("---\n") else []
        if found:
            click.echo(f"----- {sid}: memories this note would save -----")
            click.echo("\n".join(f"- {s.kind}: {s.title}" for s in found) + "\n")


def _refresh_trees(app: AppContext, roots, written) -> None:  # noqa: ANN001 - capture's types, imported lazily
    """Refresh the trees this pass wrote into (index, index.md and ROOT.md, .gitignore),
    as the daemon does after its passes, so they are current now rather than at the next
    `memoryd compile`. The pass indexed the notes it wrote as it went (from memory); the
    walk finds them current and catches the rest (a killed pass's notes, edits)."""
    from daemon.memory.index import SearchIndexError, open_index
    from daemon.memory.refresh import refresh_tree

    if not roots:
        return
    try:
        with open_index(app.config) as index:
            for root in roots:
                done = written.get(root.path)
                refresh_tree(index, root, synced=done.indexed if done else None, known=done.signatures if done else None)
    except (SearchIndexError, OSError) as exc:
        click.echo(f"warning: notes written, trees not compiled ({exc}); run `memoryd compile`", err=True)


def _mention_running_daemon(app: AppContext) -> None:
    """Say so when `memoryd run` is up: its passes and this one share the work safely,
    but the user may not need this one at all."""
    from daemon.service.lock import read_lock

    lock = read_lock(app.paths.lock_file)
    if lock is not None and lock.alive:
        click.echo(f"note: the daemon (pid {lock.pid}) already captures sessions as they settle; this pass runs alongside it.", err=True)


def _run_with_progress(capture, options):
    if not sys.stderr.isatty():
        return capture.run_pass(options)
    import time

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from daemon.scrub import redact

    with Progress(
        TextColumn("[bold]distilling"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.description}", style="dim"),
        console=Console(stderr=True),
        transient=True,
    ) as bar:
        task = bar.add_task("", total=None)
        shown = [0.0]

        def progress(done: int, total: int, title: str) -> None:
            # Titles come as stored: one is scrubbed for the screen ten times a second at
            # most, not once for each of 50,000 sessions a listing walks past.
            now = time.monotonic()
            if now - shown[0] < 0.1 and done < total:
                bar.update(task, completed=done, total=total)
                return
            shown[0] = now
            bar.update(task, completed=done, total=total, description=redact(title)[:40])

        return capture.run_pass(options, progress)


WARNINGS_SHOWN = 5


def _print_report(report, capture, verbose: bool) -> None:
    echo = click.echo
    if report.would_distill:
        echo(f"Would distill {len(report.would_distill)} session(s):")
        for sid in report.would_distill:
            echo(f"  {sid}")
    parts = [
        f"{len(report.distilled)} distilled",
        f"{report.unchanged} unchanged",
        f"{len(report.junk)} junk",
        f"{len(report.settling)} settling",
        f"{len(report.failed)} failed",
    ]
    if report.pending:
        parts.append(f"{len(report.pending)} pending")
    echo(", ".join(parts) + f" ({report.seconds:.1f}s)")
    if report.calls:
        echo(f"Model: {report.calls} call(s), {report.tokens} token(s).")
    if verbose:
        for path in report.notes.values():
            echo(f"  note: {path}")
    if report.settling:
        echo("Settling sessions were updated in the last capture.settle_seconds; run again later or use --settle 0.")
    if report.stop_reason:
        _print_stop(report, capture)
    for sid, error in report.failed:
        echo(f"failed: {sid}: {error}", err=True)
    if report.server_failures:
        echo(
            f"{report.server_failures} session(s) will be retried later: the model server failed "
            f"({report.server_error}); `memoryd status` shows when",
            err=True,
        )
    if report.failed:
        echo("See `memoryd status` and `memoryd logs --level error`; a failed session is retried when it changes, or with --force.", err=True)
    for warning in report.warnings[:WARNINGS_SHOWN]:
        echo(f"warning: {warning}", err=True)
    if len(report.warnings) > WARNINGS_SHOWN:
        more = len(report.warnings) - WARNINGS_SHOWN
        echo(f"warning: … and {more} more, see `memoryd logs --level warning`", err=True)


def _print_stop(report, capture) -> None:
    """Why the pass stopped calling the model, and what the user can do about it."""
    waiting = report.stopped
    left = f"{waiting} session(s) stay pending"
    if report.stop_reason == "budget":
        lines = ["The daily model budget is spent (`memoryd status` shows today's spend)."]
        if report.fallback:
            lines.append(
                f"{len(report.fallback)} session(s) got an extractive note for now; "
                "the model redoes them when the budget allows."
            )
        if waiting and capture.fallback is not None:
            lines.append(f"{waiting} note(s) are kept as they are until the budget lets the model redo them.")
        elif waiting:
            lines.append(
                f"{left} until tomorrow; to go on now, raise llm.daily_call_budget / llm.daily_token_budget, "
                'or set llm.fallback = "extractive" for interim notes.'
            )
        click.echo("\n".join(lines))
        return
    advice = {
        "auth": f"Fix the key, then run `memoryd distill` again; {left}.",
        "unavailable": (
            f"The model server is not reachable. Start it (or correct llm.base_url), "
            f"then run `memoryd distill` again; {left}."
        ),
        "rate_limit": f"The model server is busy or rate limited; {left}: run again later (the daemon retries on its own).",
        "config": f"Correct llm.base_url / llm.model, then run `memoryd distill` again; {left}.",
    }.get(report.stop_reason, f"The pass stopped calling the model; {left}.")
    click.echo(f"{report.stop_message}\n{advice}", err=True)

"""compile, sweep and reindex: upkeep of every memory tree memoryd knows."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import click

from daemon.cli.app import EXIT_FAILED, AppContext
from daemon.cli.memory import memory_errors

if TYPE_CHECKING:
    from daemon.memory.index import SearchIndex
    from daemon.memory.roots import MemoryRoot
    from daemon.memory.tree import Problem

_project_option = click.option(
    "--project",
    "projects",
    multiple=True,
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    metavar="DIR",
    help="Also include the project containing DIR (repeatable).",
)


def _open_index(app: AppContext) -> SearchIndex:
    from daemon.memory.index import open_index

    return open_index(app.config)


def _roots(app: AppContext, index: SearchIndex, projects: tuple[Path, ...]) -> list[MemoryRoot]:
    """Every existing tree: global, configured, this directory's project, any given, any
    indexed, and the projects OpenCode sessions ran in (as the daemon sees them)."""
    from daemon.memory.roots import known_roots

    if not app.paths.state_db.exists():
        return known_roots(app.config, None, [Path.cwd(), *projects], index.known_roots())
    from daemon.state import StateDB

    state = StateDB(app.paths.state_db)
    try:
        return known_roots(app.config, state, [Path.cwd(), *projects], index.known_roots())
    finally:
        state.close()


def _print_problems(problems: list[Problem]) -> None:
    for problem in problems:
        what = "skipped" if problem.skipped else "warning"
        click.echo(f"  {what}: {problem.path}: {problem.reason}", err=True)


@click.command(name="compile")
@_project_option
@click.pass_obj
def compile_cmd(app: AppContext, projects: tuple[Path, ...]) -> None:
    """Recompile every tree's <category>/index.md and ROOT.md's generated blocks.

    Only files whose content changes are written. Text outside the generated blocks of
    ROOT.md (goals, your own rules) is kept exactly. The daemon does this by itself on
    every change; run it by hand after editing trees while it was stopped.

    \b
    Examples:
      memoryd compile
      memoryd compile --project ~/src/app
    """
    from daemon.memory.refresh import refresh_tree

    app.setup_logging(stderr=False)
    failed = False
    with memory_errors(), _open_index(app) as index:
        roots = _roots(app, index, projects)
        if not roots:
            click.echo(f"No memory tree yet (the global one would be {app.paths.global_root}).")
            return
        for root in roots:
            report = refresh_tree(index, root, everything=True).compiled
            status = f"wrote {len(report.written)} file(s)" if report.written else "up to date"
            click.echo(f"{root.scope:<7} {root.path}: {status}")
            for path in report.written:
                click.echo(f"  {path}")
            _print_problems(index.problems(root) + report.problems)
            failed = failed or bool(report.problems)
    if failed:
        raise SystemExit(EXIT_FAILED)


@click.command()
@click.option("--dry-run", is_flag=True, help="Only show what would move or be deleted.")
@_project_option
@click.pass_obj
def sweep(app: AppContext, dry_run: bool, projects: tuple[Path, ...]) -> None:
    """Move expired memories to <tree>/.expired/ and delete old expired files.

    A memory whose `expires` has passed leaves the live tree (and search) for
    <tree>/.expired/<category>/; after sweep.keep_expired_days there it is deleted.
    Transcripts older than capture.transcript_days are deleted.
    Expired rows of an opencode-memory store (sweep.opencode_memory_db) go too.

    \b
    Examples:
      memoryd sweep --dry-run
      memoryd sweep
    """
    from daemon.capture.retention import prune_transcripts
    from daemon.memory.sweep import plan_expired, plan_purge
    from daemon.memory.sweep import sweep as run_sweep

    app.setup_logging(stderr=False)
    now = datetime.now(UTC)
    keep = app.settings.sweep.keep_expired_days
    store = app.paths.opencode_memory_db
    with memory_errors(), _open_index(app) as index:
        roots = _roots(app, index, projects)
        if dry_run:
            for root in roots:
                index.sync_root(root)
                for memory in plan_expired(index.expired(root, now), now):
                    click.echo(f"would move {memory.path} (expired {memory.expires:%Y-%m-%d %H:%M} UTC)")
                for path in plan_purge(root, now, keep):
                    click.echo(f"would delete {path} (in .expired/ for over {keep} days)")
            if store.exists():
                click.echo(f"would delete expired entries from {store}")
            for path in prune_transcripts(app.paths.transcripts_dir, app.settings.capture.transcript_days, now.timestamp(), dry_run=True):
                click.echo(f"would delete {path} (a transcript past capture.transcript_days)")
            return
        report = run_sweep(roots, now, keep, store, index=index)
    old = prune_transcripts(app.paths.transcripts_dir, app.settings.capture.transcript_days, now.timestamp())
    if old:
        click.echo(f"deleted {len(old)} transcript(s) past capture.transcript_days ({app.paths.transcripts_dir})")
    for source, target in report.moved:
        click.echo(f"moved {source} -> {target}")
    for source, target in report.restored:
        click.echo(f"moved back {source} -> {target} (not expired after all)")
    for path in report.purged:
        click.echo(f"deleted {path}")
    if report.waiting:
        click.echo(f"kept {len(report.waiting)} file(s) past keep_expired_days until a sweep a real day later agrees")
    if report.store is not None:
        entries = "entry" if report.store_deleted == 1 else "entries"
        click.echo(f"{report.store}: deleted {report.store_deleted} expired {entries}")
    if not (report.moved or report.restored or report.purged or report.waiting or report.store_deleted or old):
        click.echo(f"Nothing expired in {len(roots)} tree(s).")
    _print_problems(report.problems)
    if report.problems:
        raise SystemExit(EXIT_FAILED)


@click.command()
@_project_option
@click.pass_obj
def reindex(app: AppContext, projects: tuple[Path, ...]) -> None:
    """Rebuild the search index from the trees, from scratch.

    The index is derived data: this loses nothing. Use it after moving trees around,
    or if recall seems to miss files you know are there.

    \b
    Examples:
      memoryd reindex
      memoryd reindex --project ~/src/app
    """
    app.setup_logging(stderr=False)
    started = time.perf_counter()
    with memory_errors(), _open_index(app) as index:
        roots = _roots(app, index, projects)
        count = index.rebuild(roots)
        problems = index.problems()
    elapsed = time.perf_counter() - started
    click.echo(f"Indexed {count} memories from {len(roots)} tree(s) in {elapsed:.2f} s.")
    for root in roots:
        click.echo(f"  {root.scope:<7} {root.path}")
    if problems:
        click.echo(f"{len(problems)} file(s) skipped or partly read:", err=True)
        _print_problems(problems)

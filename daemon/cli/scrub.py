"""memoryd scrub: the current secret rules applied again to everything memoryd stored."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from daemon.cli.app import EXIT_FAILED, AppContext
from daemon.cli.memory import memory_errors
from daemon.cli.tree import _open_index, _project_option, _roots


@click.command()
@click.option("--dry-run", is_flag=True, help="Only report what would change; write nothing.")
@_project_option
@click.pass_obj
def scrub(app: AppContext, dry_run: bool, projects: tuple[Path, ...]) -> None:
    """Re-apply the current secret rules to everything memoryd has stored.

    Notes and memories (frontmatter fields and body; a file whose name held a secret is
    renamed), ROOT.md, the transcripts (those past capture.transcript_days are deleted),
    state.db (session titles, errors, the hold), the sink outbox, and then the search
    index and compiled index.md files, rebuilt from the scrubbed trees. Writes are atomic.
    Stop the daemon first (`memoryd service stop`) so it does not write meanwhile.

    \b
    Examples:
      memoryd scrub --dry-run
      memoryd scrub
    """
    from daemon.capture.retention import count_transcripts, rescrub_transcripts
    from daemon.memory.refresh import refresh_tree
    from daemon.memory.rescrub import count_files, rescrub_tree

    app.setup_logging(stderr=False)
    verb = "would " if dry_run else ""
    with memory_errors(), _open_index(app) as index:
        roots = [r for r in _roots(app, index, projects) if r.path.is_dir()]
        transcripts = app.paths.transcripts_dir
        total = sum(count_files(r) for r in roots) + count_transcripts(transcripts)
        with click.progressbar(length=total, label="Scrubbing", file=sys.stderr) as bar:
            step = lambda _path: bar.update(1)  # noqa: E731
            trees = [rescrub_tree(root, dry_run, step) for root in roots]
            kept = rescrub_transcripts(transcripts, app.settings.capture.transcript_days, time.time(), dry_run, step)
        renames = [(t.root, old, new) for t in trees for old, new in t.renamed]
        rows, queued = _rescrub_state(app, renames, dry_run)
        if not dry_run:
            index.rebuild(roots)
            for root in roots:
                refresh_tree(index, root, everything=True)
    for tree in trees:
        for path in tree.rewritten:
            click.echo(f"{verb}scrub {path}")
        for old, new in tree.renamed:
            click.echo(f"{verb}rename {old} -> {new.name}")
        for path, reason in tree.unreadable:
            click.echo(f"  skipped: {path}: {reason}", err=True)
    files = sum(len(t.rewritten) for t in trees)
    click.echo(
        f"{'Would change' if dry_run else 'Changed'}: {files} memory file(s), {len(renames)} renamed, "
        f"{len(kept.rewritten)} transcript(s) scrubbed, {len(kept.deleted)} past retention deleted, "
        f"{rows} state row(s), {queued} outbox entr{'y' if queued == 1 else 'ies'}"
        + ("" if dry_run else "; search index and compiled files rebuilt") + "."
    )
    if any(t.unreadable for t in trees):
        raise SystemExit(EXIT_FAILED)


def _rescrub_state(app: AppContext, renames: list, dry_run: bool) -> tuple[int, int]:  # noqa: ANN001
    """Scrub state.db's rows and the outbox; point them at renamed notes."""
    if not app.paths.state_db.exists():
        return 0, 0
    from daemon.sinks.outbox import Outbox
    from daemon.state import StateDB

    state = StateDB(app.paths.state_db)
    try:
        outbox = Outbox(state)
        if not dry_run:
            for root, old, new in renames:
                state.rename_note(str(old), str(new))
                outbox.rename_path(str(old.relative_to(root.path)), str(new.relative_to(root.path)))
        return state.rescrub(dry_run), outbox.rescrub(dry_run)
    finally:
        state.close()

"""recall, remember, forget, inspect and list: thin wrappers over daemon.memory.commands.

Kept light on purpose: `memoryd recall` is run by people and agents many times a
session, so this module imports neither rich nor structlog, and the memory modules
only when a command runs.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from daemon.cli.app import EXIT_FAILED, EXIT_USAGE, AppContext, fail

if TYPE_CHECKING:
    from daemon.memory.tree import Memory
    from daemon.memory.workspace import Workspace

# A credential was refused: distinct from usage errors so scripts can tell them apart.
EXIT_REFUSED = 3

_project_option = click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    help="Act for the project containing DIR (default: the current directory's git worktree).",
    metavar="DIR",
)
_scope_option = click.option(
    "--scope",
    type=click.Choice(["project", "global", "all"]),
    default="all",
    show_default=True,
    help="project: this worktree's .memory/; global: the global tree; all: both, project first.",
)
_json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts and tools.")


@contextmanager
def memory_errors() -> Iterator[None]:
    """Turn the memory commands' errors into a message and an exit code (also for compile/sweep/reindex)."""
    from daemon.diskfull import DiskFull, is_disk_full
    from daemon.memory.index import SearchIndexError
    from daemon.memory.workspace import InvalidInput, MemoryNotFound, SecretRefused

    try:
        yield
    except SecretRefused as exc:
        fail(str(exc), EXIT_REFUSED)
    except InvalidInput as exc:
        fail(str(exc), EXIT_USAGE)
    except MemoryNotFound as exc:
        fail(str(exc), EXIT_FAILED)
    except SearchIndexError as exc:
        fail(str(exc), EXIT_FAILED)
    except DiskFull as exc:
        fail(str(exc), EXIT_FAILED)
    except sqlite3.OperationalError as exc:
        if is_disk_full(exc):
            raise  # main() names the full disk
        fail(f"the search index is busy or damaged ({exc}); try again, or run `memoryd reindex`", EXIT_FAILED)
    except OSError as exc:
        fail(f"{exc.filename or 'a memory tree'}: {exc.strerror or exc}", EXIT_FAILED)


def _workspace(
    app: AppContext, project: Path | None, *, reading: bool = False, option: str = "--project"
) -> Workspace:
    """Open the caller's workspace; `reading` commands trust the index a running daemon keeps
    and may use the settings an earlier command validated. `option` names the flag that gave
    `project`, so an error points at what the user typed."""
    from daemon.memory import wordtables
    from daemon.memory.workspace import open_workspace

    app.quick = reading
    if reading:  # a quick command reads the stop words and glossary as built before
        wordtables.keep_in(app.paths.state_dir)

    if project is not None and not project.is_dir():
        fail(f"{option} {project}: no such directory")
    ws = open_workspace(app.config, project or Path.cwd(), explicit_project=project is not None)
    ws.trust_index = reading and _daemon_running(app)
    return ws


def _daemon_running(app: AppContext) -> bool:
    # The daemon re-indexes every tree it watches on each change, so a read need not
    # stat every file again; without it, reads check the trees themselves.
    from daemon.service.lock import read_lock

    info = read_lock(app.paths.lock_file)
    return bool(info and info.alive)


def _memory_json(memory: Memory) -> dict[str, Any]:
    from daemon.timefmt import format_time

    def when(value: Any) -> str | None:
        return format_time(value) if value else None

    return {
        "id": memory.id,
        "title": memory.title,
        "description": memory.description,
        "kind": memory.kind,
        "category": memory.category,
        "scope": memory.scope,
        "tags": list(memory.tags),
        "hard_rule": memory.hard_rule,
        "created": when(memory.created),
        "updated": when(memory.updated),
        "expires": when(memory.expires),
        "path": str(memory.path),
    }


def _echo_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def _day(memory: Memory) -> str:
    return memory.newest.strftime("%Y-%m-%d")


def _label(memory: Memory) -> str:
    return f"{memory.kind}, {memory.scope}, {_day(memory)}, id {memory.id}"


def _indent(text: str, prefix: str = "   ") -> str:
    return "\n".join(prefix + line if line.strip() else "" for line in text.splitlines())


def _read_body(body: str) -> str:
    if body == "-":
        return sys.stdin.read()
    return body


# --- recall ---------------------------------------------------------------------------


@click.command()
@click.argument("words", nargs=-1, required=True, metavar="QUERY...")
@click.option("--limit", "-n", type=int, default=10, show_default=True, help="How many results (1..50).")
@_scope_option
@click.option(
    "--all", "every_project", is_flag=True,
    help="Other projects' memories kept in the global tree too (by default: this project's and the machine-wide ones).",
)  # fmt: skip
@_project_option
@_json_option
@click.option("--cognee", is_flag=True, help="Also ask the Cognee server ([sinks.cognee]) and print its answers.")
@click.pass_obj
def recall(
    app: AppContext, words: tuple[str, ...], limit: int, scope: str, every_project: bool, project: Path | None,
    as_json: bool, cognee: bool,
) -> None:  # fmt: skip
    """Search memories: best match first, newest first on a tie.

    Words and identifiers match whole or in parts (snake_case, kebab-case, dotted.names,
    paths), Chinese, Japanese and Korean text by character pairs. Inside a project, the
    global tree's notes of other projects are left out unless --all. When no memory holds
    every word, the words are retried as prefixes, so `migrat` finds "migration".
    With --cognee the Cognee server's search answers follow the local hits.

    \b
    Examples:
      memoryd recall postgres migration
      memoryd recall deploy --scope project
      memoryd recall wal -n 3 --json
      memoryd recall deploy --cognee
    """
    from daemon.memory.commands import recall as run_recall

    query = " ".join(words)

    with memory_errors():
        # --cognee reads [sinks.cognee], which the quick settings do not hold.
        ws = _workspace(app, project, reading=not cognee)
        result = run_recall(ws, query, limit=limit, scope=scope, every_project=every_project)  # type: ignore[arg-type]
    if as_json:
        out = {
            "query": query,
            "match": result.mode,
            "results": [{**_memory_json(hit.memory), "score": hit.score, "preview": hit.preview} for hit in result.hits],
        }
        if cognee:
            from daemon.cli.sink import ask_cognee

            out["cognee"] = ask_cognee(app, query, limit)
        _echo_json(out)
        return
    if not result.hits:
        click.echo(f"No memory matches {query!r}. `memoryd list` shows what there is.")
    elif result.mode == "prefix":
        click.echo("(no memory holds every word: showing prefix matches)", err=True)
    for number, hit in enumerate(result.hits, 1):
        memory = hit.memory
        click.echo(f"{number}. {memory.title}  ({_label(memory)})")
        click.echo(f"   {memory.path}")
        if hit.preview:
            click.echo(_indent(hit.preview))
        click.echo("")
    if cognee:
        from daemon.cli.sink import ask_cognee, format_cognee

        click.echo(format_cognee(ask_cognee(app, query, limit)))


# --- remember -------------------------------------------------------------------------


class _BodyCommand(click.Command):
    """`remember`, whose BODY may start with a dash (`-----BEGIN …`, `-x is a flag`):
    click takes such a word for an option, so the error says how to pass it."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            exc.message += (
                " A BODY that starts with '-' goes after `--` "
                "(memoryd remember -k fact -t TITLE -- '-----BEGIN …'), or on stdin with BODY '-'."
            )
            raise


@click.command(cls=_BodyCommand)
@click.option("--kind", "-k", required=True, help="decision, fact, preference, gotcha, lesson… (the folder).")
@click.option("--title", "-t", required=True, help="Short and specific; the same title updates the memory.")
@click.option("--tags", default="", help="Comma-separated: --tags db,sqlite")
@click.option(
    "--expires",
    metavar="DATE|DURATION",
    help="2025-12-31, 2025-12-31T18:00:00Z, or a duration from now: 12h, 30d, 2w, 6mo, 1y, 1h30m "
    "(m = minutes, mo = months of 30 days).",
)
@click.option("--description", help="One line for index.md (default: the body's first sentence).")
@click.option("--global", "is_global", is_flag=True, help="Save to the global tree instead of this project's.")
@click.option(
    "--hard-rule", is_flag=True, help="A rule every session must follow: listed in ROOT.md and in every session's block."
)
@_project_option
@_json_option
@click.argument("body")
@click.pass_obj
def remember(
    app: AppContext,
    kind: str,
    title: str,
    tags: str,
    expires: str | None,
    description: str | None,
    is_global: bool,
    hard_rule: bool,
    project: Path | None,
    as_json: bool,
    body: str,
) -> None:
    """Save a memory as <tree>/<kind>/<slug>.md (BODY, or - to read stdin; a BODY that
    starts with '-' goes after `--`).

    Saving the same title again in the same tree updates that file (`updated` moves,
    `created` stays) instead of adding a second one. Anything that looks like a
    credential (API keys, tokens, passwords) is refused and nothing is written.

    \b
    Examples:
      memoryd remember -k decision -t "Use WAL mode" --tags db,sqlite \\
          "SQLite runs in WAL so concurrent sessions do not queue."
      git log -1 --format=%B | memoryd remember -k lesson -t "Pin pnpm in CI" -
      memoryd remember -k fact -t "CI runner down" --expires 2d --global "Use the backup runner."
      memoryd remember -k rule -t "Never push to main" --hard-rule "Open a PR; CI must pass."
      memoryd remember -k fact -t "PEM header" -- "-----BEGIN CERTIFICATE----- starts a PEM"
    """
    from daemon.memory.commands import remember as run_remember

    if is_global and project is not None:
        fail("--global and --project name different trees: give one of them")
    app.setup_logging(stderr=False)
    with memory_errors():
        ws = _workspace(app, project)
        result = run_remember(
            ws,
            kind=kind,
            title=title,
            body=_read_body(body),
            tags=[tags] if tags else [],
            expires=expires,
            description=description,
            scope="global" if is_global else "project",
            hard_rule=hard_rule,
        )
    memory = result.memory
    if as_json:
        moved = str(result.moved_from) if result.moved_from else None
        _echo_json({**_memory_json(memory), "created_now": result.created, "moved_from": moved, "note": result.note})
        return
    verb = "Saved" if result.created else "Updated"
    click.echo(f"{verb} {memory.kind} {memory.title!r} (id {memory.id})")
    click.echo(f"  {memory.path}")
    if result.moved_from:
        click.echo(f"  moved from {result.moved_from}")
    if result.note:
        click.echo(f"note: {result.note}", err=True)


# --- forget ---------------------------------------------------------------------------


@click.command()
@click.argument("memory_id", metavar="[ID]", required=False)
@click.option("--query", "-q", help="Forget the memories matching every word, in this project and the global tree.")
@click.option("--limit", "-n", type=int, default=10, show_default=True, help="At most this many matches for --query.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask before deleting what --query matched.")
@_project_option
@click.pass_obj
def forget(
    app: AppContext, memory_id: str | None, query: str | None, limit: int, yes: bool, project: Path | None
) -> None:
    """Delete a memory by id, or the memories a query matches.

    By id, the memory is deleted wherever it is (ids are unique, so a closed worktree
    stays cleanable). By query, only this project's tree and the global tree are
    searched, every word must match, and the matches are shown before anything goes.

    \b
    Examples:
      memoryd forget 3f9a1c2b7d4e
      memoryd forget --query "old staging host"
      memoryd forget -q "ci runner down" --yes
    """
    from daemon.memory.commands import delete_memories, forget_by_id, forget_by_query

    if (memory_id is None) == (query is None):
        fail("give either an ID or --query WORDS (see `memoryd forget --help`)")
    app.setup_logging(stderr=False)
    with memory_errors():
        ws = _workspace(app, project)
        if memory_id is not None:
            result = forget_by_id(ws, memory_id)
        else:
            candidates = forget_by_query(ws, query or "", limit=limit)
            if not candidates:
                # Nothing to forget is a failure, as for an unknown id (exit 1).
                fail(f"no memory in this project or the global tree matches every word of {query!r}", EXIT_FAILED)
            click.echo(f"{len(candidates)} memor{'y' if len(candidates) == 1 else 'ies'} to forget:")
            for memory in candidates:
                click.echo(f"  - {memory.title}  ({_label(memory)})\n    {memory.path}")
            if not yes:
                if not sys.stdin.isatty():
                    fail("not deleting without confirmation: run again with --yes")
                if not click.confirm("Delete them?", default=False):
                    click.echo("Nothing deleted.")
                    return
            result = delete_memories(ws, candidates)
    for memory in result.deleted:
        click.echo(f"Forgot {memory.title!r} ({memory.path})")


# --- inspect --------------------------------------------------------------------------


@click.command()
@click.argument("memory_id", metavar="[ID]", required=False)
@_project_option
@_json_option
@click.pass_obj
def inspect(app: AppContext, memory_id: str | None, project: Path | None, as_json: bool) -> None:
    """Show one memory by id, or without an ID the inventory a session sees.

    The inventory lists titles, kinds and dates (no bodies) of this project's memories
    and the machine-wide ones (never another project's): this project's curated ones
    first (lessons and gotchas, then the rest), then machine-wide ones, then this
    project's sessions, in about 1,200 characters; hard rules are marked. `memoryd
    context` shows the whole session block.

    \b
    Examples:
      memoryd inspect
      memoryd inspect 3f9a1c2b7d4e
    """
    from daemon.memory.commands import inspect as run_inspect
    from daemon.memory.commands import inventory

    with memory_errors():
        ws = _workspace(app, project, reading=True)
        if memory_id is None:
            result = inventory(ws)
            if as_json:
                _echo_json({"text": result.text, "shown": result.shown, "total": result.total})
            else:
                click.echo(result.text)
            return
        detail = run_inspect(ws, memory_id)
    if as_json:
        _echo_json({**_memory_json(detail.memory), "hits": detail.hits, "body": detail.memory.body})
        return
    click.echo(f"# {detail.memory.path}  ({_label(detail.memory)}, recalled {detail.hits}×)")
    click.echo(detail.text.rstrip("\n"))


# --- list -----------------------------------------------------------------------------


@click.command(name="list")
@click.option("--kind", "-k", help="Only this kind (decision, lesson, session…).")
@click.option("--limit", "-n", type=int, help="At most this many.")
@click.option("--junk", is_flag=True, help="Instead: the sessions skipped as junk, with the reason.")
@_scope_option
@_project_option
@_json_option
@click.pass_obj
def list_memories(
    app: AppContext, kind: str | None, limit: int | None, junk: bool, scope: str, project: Path | None, as_json: bool
) -> None:
    """List memories, newest first.

    A project memory hides a global one with the same kind and title; global hard
    rules are always listed.

    \b
    Examples:
      memoryd list
      memoryd list --kind lesson --scope global
      memoryd list --junk              # sessions skipped as junk, and why
    """
    if junk:
        from daemon.cli.skipped import list_junk

        list_junk(app, limit, as_json)
        return
    from daemon.memory.commands import list_memories as run_list

    with memory_errors():
        ws = _workspace(app, project, reading=True)
        memories = run_list(ws, kind=kind, scope=scope, limit=limit)  # type: ignore[arg-type]
    if as_json:
        _echo_json([_memory_json(m) for m in memories])
        return
    if not memories:
        click.echo("No memories yet. Save one with `memoryd remember` (see --help).")
        return
    for memory in memories:
        click.echo(f"{_day(memory)}  {memory.kind:<10}  {memory.title}  ({memory.scope}, id {memory.id})")

"""The real daemon compiles once per Markdown change: its own index.md/ROOT.md writes are no work."""

from __future__ import annotations

import time

from tests.service.conftest import wait_for

MEMORY = "---\ntitle: {title}\nkind: fact\n---\nThe API listens on {port}.\n"


def passes(daemon) -> int:  # noqa: F811 - the fixture's value
    return daemon.output().count('"tree.pass"')


def settled(daemon, quiet: float = 3.0) -> int:  # noqa: F811
    """Wait until no compile pass has run for `quiet` seconds; return the count so far.

    3 s: on a loaded CI machine a start-up's passes can be more than 1.5 s apart."""
    count, since = passes(daemon), time.monotonic()
    deadline = since + 20
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = passes(daemon)
        if now != count:
            count, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return count
    raise AssertionError("the daemon never stopped compiling")


def test_each_markdown_edit_costs_exactly_one_compile_pass(home, daemon, notify):  # noqa: F811
    memory = home.global_root / "fact" / "api-port.md"
    memory.parent.mkdir(parents=True)
    memory.write_text(MEMORY.format(title="API port", port=8080))
    daemon.start()
    wait_for(lambda: notify.saw("READY=1"), what="READY=1")
    index_md = home.global_root / "fact" / "index.md"
    wait_for(lambda: index_md.exists() and (home.global_root / "ROOT.md").exists(), what="first compile")
    before = settled(daemon)

    for n, port in enumerate((8081, 8082, 8083), start=1):
        title = f"API port {port}"
        memory.write_text(MEMORY.format(title=title, port=port))
        wait_for(lambda t=title: t in index_md.read_text(), what=f"index.md lists {title!r}")
        # index.md and ROOT.md were rewritten by that pass: their events must not start another.
        assert settled(daemon) == before + n, daemon.output()[-3000:]

    # A deleted index.md is compiled output a person removed: it comes back, in one pass.
    index_md.unlink()
    wait_for(index_md.exists, what="index.md restored")
    assert settled(daemon) == before + 4

    assert daemon.stop() == 0, daemon.output()
    assert "Traceback" not in daemon.output()


def test_a_note_the_daemon_writes_costs_one_refresh_not_a_second_on_its_echo(home, fixture_db, fixture_sessions, daemon, notify):  # noqa: F811
    from tests.capture.helpers import add_message, max_time

    daemon.start()
    wait_for(lambda: notify.saw("READY=1"), what="READY=1")
    before = settled(daemon)
    sid = fixture_sessions["deploy-pnpm"]["session"]
    at = max_time(fixture_db) + 1000
    text = "Also pin the pnpm version in CI"
    add_message(fixture_db, sid, "msg_zzzz7", "user", [("prt_zzzz7", {"type": "text", "text": text})], at)
    index_md = home.global_root / "sessions" / "index.md"
    wait_for(lambda: any(text in n.read_text() for n in index_md.parent.glob("*.md")), what="the note rewritten")
    # The pass's own refresh indexes and compiles the note; the watcher hears the write
    # (a rename into the folder) and knows it for our own: no second pass.
    assert settled(daemon) == before + 1, daemon.output()[-3000:]
    assert daemon.stop() == 0, daemon.output()


def test_an_edit_after_our_write_is_work_again(tmp_path):
    from watchdog.events import FileModifiedEvent, FileMovedEvent

    from daemon.capture.treewrite import OwnWrites, TreeWriter
    from daemon.memory.roots import MemoryRoot
    from daemon.service.events import TreeEvents
    from daemon.state import WriteFence

    root = MemoryRoot(tmp_path / "tree", "global")
    note = root.path / "sessions" / "note.md"
    writer = TreeWriter(WriteFence(), OwnWrites())
    heard: list = []
    handler = TreeEvents(root, heard.append, writer.own.is_echo)
    assert writer.write_note(root, note, "---\ntitle: n\n---\nbody\n")
    handler.dispatch(FileMovedEvent(str(root.path / "sessions" / ".memoryd-tmp-1"), str(note)))
    assert heard == []  # our own write's echo
    note.write_text("---\ntitle: n\n---\nbody, edited by hand\n")
    handler.dispatch(FileModifiedEvent(str(note)))
    assert heard == [root.path]


def test_events_name_the_files_to_read_again_or_ask_for_the_whole_tree(tmp_path):
    from watchdog.events import DirMovedEvent, FileDeletedEvent, FileModifiedEvent, FileMovedEvent

    from daemon.memory.roots import MemoryRoot
    from daemon.service.events import MAX_PATHS, PENDING, TreeEvents

    root = MemoryRoot(tmp_path / "tree", "global")
    handler = TreeEvents(root, lambda _root: None)
    fact = root.path / "fact"
    assert PENDING.take(root.path) is None  # nothing heard: the whole tree
    handler.dispatch(FileModifiedEvent(str(fact / "a.md")))
    handler.dispatch(FileMovedEvent(str(fact / ".a.md.swp"), str(fact / "b.md")))  # an editor's rename into place
    handler.dispatch(FileModifiedEvent(str(fact / "index.md")))  # compiled output: no work, not noted
    assert PENDING.take(root.path) == {fact / "a.md", fact / "b.md"}
    assert PENDING.take(root.path) is None  # taken once
    handler.dispatch(FileModifiedEvent(str(fact / "a.md")))
    handler.dispatch(FileDeletedEvent(str(fact / "index.md")))  # compile must put it back: the whole tree
    handler.dispatch(FileModifiedEvent(str(fact / "c.md")))
    assert PENDING.take(root.path) is None
    handler.dispatch(DirMovedEvent(str(root.path / "facts"), str(fact)))  # a category folder moved
    assert PENDING.take(root.path) is None
    for n in range(MAX_PATHS + 1):  # a checkout: one sync beats a file at a time
        handler.dispatch(FileModifiedEvent(str(fact / f"m{n}.md")))
    assert PENDING.take(root.path) is None

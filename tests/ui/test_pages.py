"""The viewer's pages and changes over real HTTP, against real trees (no browser)."""

from __future__ import annotations

import difflib
import os
import re
import signal
import subprocess
import sys

import httpx
import pytest

from daemon.memory.commands import remember
from daemon.memory.workspace import open_workspace

from .conftest import XSS_SCRIPT, World
from .test_security import csrf_of, logged_in


def test_every_page_reads_without_javascript(served, world: World) -> None:  # noqa: ANN001
    client = logged_in(served)
    overview = client.get("/")
    assert overview.status_code == 200 and "OpenCode" in overview.text and "Capture" in overview.text
    sessions = client.get("/sessions")
    assert sessions.text.count("fixed the flaky login test") == 3
    memories = client.get("/memories").text
    # Hard rules first, session notes left to the Sessions page.
    assert memories.index("Never push to main") < memories.index("Use WAL mode")
    assert "flaky login" not in memories
    note = client.get(f"/memories/{world.ids['session1']}").text
    assert "<h2>What Was Worked On</h2>" in note and "Edit</a>" not in note  # a note is rendered, not edited


def test_the_overview_reads_the_capture_state_and_the_spend(served, world: World) -> None:  # noqa: ANN001
    from daemon.state import StateDB

    client = logged_in(served)
    assert "no capture pass has run yet" in client.get("/").text
    StateDB(world.config.paths.state_db).close()  # what the first capture pass leaves
    page = client.get("/").text
    assert "Capture lag" in page and "0 failed" in page and "Extractive distiller: no model, no spend." in page


def test_memories_filter_by_kind_and_project(served, world: World) -> None:  # noqa: ANN001
    client = logged_in(served)
    decisions = client.get("/memories", params={"kind": "decision"}).text
    assert "Use WAL mode" in decisions and "Never push to main" not in decisions
    machine_wide = client.get("/memories", params={"project": ""}).text
    assert "部署 runs from the release branch" in machine_wide and "Use WAL mode" not in machine_wide


def _older(html: str) -> str | None:
    """The "Older →" link of a page, as a browser follows it."""
    found = re.search(r'<a rel="next" href="([^"]+)">Older', html)
    return found.group(1).replace("&amp;", "&") if found else None


def test_listings_page_instead_of_listing_everything(served, world: World) -> None:  # noqa: ANN001
    with open_workspace(world.config, world.project, explicit_project=True) as ws:
        for n in range(120):
            remember(ws, kind="fact", title=f"Fact number {n:03d}", body=f"The {n}th fact.")
        for n in range(60):
            remember(ws, kind="lesson", title=f"Lesson number {n:03d}", body=f"The {n}th lesson.")
    client = logged_in(served)
    for kind, count in (("fact", 120), ("lesson", 60), ("", 120 + 60 + 2)):  # the hard rule is listed apart
        pages, link = [], f"/memories?kind={kind}&project={world.project}"
        while link is not None:
            html = client.get(link if link.startswith("/") else "/memories" + link).text
            pages.append(html)
            link = _older(html)
        shown = [re.findall(r'<li>\s*<a href="/memories/([0-9a-f]+)"', html) for html in pages]
        assert [len(ids) for ids in shown][:-1] == [50] * (len(pages) - 1) and 0 < len(shown[-1]) <= 50
        ids = [i for page in shown for i in page]
        assert len(ids) == len(set(ids)) == count, kind  # every one once, none twice
    listed = client.get("/memories").text
    assert listed.index("Hard rules") < listed.index("Never push to main") < listed.index("Newest first")


def test_search_finds_cjk_and_marks_the_matches(served, world: World) -> None:  # noqa: ANN001
    client = logged_in(served)
    found = client.get("/search", params={"q": "部署", "project": str(world.project), "scope": "all"}).text
    assert "<mark>部署</mark> runs from the release branch" in found
    # The CLI's scopes: a project scope leaves the global tree out.
    project_only = client.get("/search", params={"q": "部署", "project": str(world.project), "scope": "project"}).text
    assert "release branch" not in project_only
    typed = client.get("/search", params={"q": "checkpoint wal", "project": str(world.project)}, headers={"HX-Request": "true"})
    assert "<html" not in typed.text and "<mark>WAL</mark> mode" in typed.text  # htmx gets the results alone


def test_memory_text_is_escaped_everywhere(served, world: World) -> None:  # noqa: ANN001
    client = logged_in(served)
    pages = [client.get(p).text for p in ("/memories", f"/memories/{world.ids['xss']}", "/search?q=title&project=" + str(world.project), "/given")]
    for html in pages:
        assert "<script>window" not in html and "<img src=x" not in html and "<svg onload" not in html
    page = pages[1]
    assert "&lt;script&gt;window.__xss" in page
    assert 'href="javascript:' not in page.lower()
    # A 15,000-character line is cut before rendering.
    assert "x" * 2000 in page and "x" * 2001 not in page


def test_an_edit_changes_only_the_lines_it_touched_and_recompiles_index_md(served, world: World) -> None:  # noqa: ANN001
    client = logged_in(served)
    mid, path = world.ids["wal"], world.file_of("wal")
    before = path.read_text().splitlines()
    form = client.get(f"/memories/{mid}/edit").text
    body = re.search(r"<textarea[^>]*>(.*?)</textarea>", form, re.S).group(1)
    assert "Checkpoint after each pass." in body
    answer = client.post(
        f"/memories/{mid}/edit",
        data={"csrf": csrf_of(client, f"/memories/{mid}/edit"), "description": "WAL: sessions never queue on the database.",
              "tags": "db, sqlite", "body": body.replace("each pass", "each capture pass").replace("\n", "\r\n")},
    )  # fmt: skip
    assert answer.status_code == 303 and answer.headers["location"] == f"/memories/{mid}?done=saved"
    after = path.read_text().splitlines()
    diff = difflib.unified_diff(before, after, lineterm="", n=0)
    # `updated` moves (unless the edit came within the same second): every other line stays.
    changed = [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---") and "updated:" not in line]
    assert sorted(changed) == sorted([
        "-" + next(line for line in before if line.startswith("description:")),
        '+description: "WAL: sessions never queue on the database."',
        "-Checkpoint after each pass.",
        "+Checkpoint after each capture pass.",
    ])  # fmt: skip
    assert len(after) == len(before) and after[-1] == "Never VACUUM live."
    index_md = (path.parent / "index.md").read_text()
    assert "WAL: sessions never queue on the database." in index_md


def test_an_edit_with_a_credential_is_refused_and_writes_nothing(served, world: World) -> None:  # noqa: ANN001
    client = logged_in(served)
    mid, path = world.ids["wal"], world.file_of("wal")
    before = path.read_bytes()
    answer = client.post(
        f"/memories/{mid}/edit",
        data={"csrf": csrf_of(client, f"/memories/{mid}/edit"), "description": "", "tags": "",
              "body": "the key is sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 3},
    )  # fmt: skip
    assert answer.status_code == 422 and "refusing to save" in answer.text
    assert path.read_bytes() == before


def test_forget_asks_first_then_deletes_and_recompiles(served, world: World) -> None:  # noqa: ANN001
    client = logged_in(served)
    mid, path = world.ids["wal"], world.file_of("wal")
    confirm = client.get(f"/memories/{mid}/forget").text
    assert "Forget this memory?" in confirm and str(path) in confirm and path.exists()
    token = csrf_of(client, f"/memories/{mid}/forget")
    unconfirmed = client.post(f"/memories/{mid}/forget", data={"csrf": token})
    assert unconfirmed.status_code == 303 and path.exists()  # back to the question
    done = client.post(f"/memories/{mid}/forget", data={"csrf": token, "confirm": "yes"})
    assert done.status_code == 303 and not path.exists()
    assert "Use WAL mode" not in (path.parent / "index.md").read_text()
    assert client.get(f"/memories/{mid}").status_code == 404


def test_make_a_hard_rule_lists_it_in_root_md(served, world: World) -> None:  # noqa: ANN001
    client = logged_in(served)
    mid = world.ids["wal"]
    answer = client.post(f"/memories/{mid}/hard-rule", data={"csrf": csrf_of(client, f"/memories/{mid}")})
    assert answer.status_code == 303
    assert "hard_rule: true" in world.file_of("wal").read_text()
    assert "Use WAL mode" in (world.project / ".memory" / "ROOT.md").read_text()
    listed = client.get("/memories").text
    assert listed.index("Use WAL mode") < listed.index("部署 runs from")  # hard rules first


def test_what_a_session_was_given_shows_the_exact_block_and_why(served, world: World) -> None:  # noqa: ANN001
    client = logged_in(served)
    recent = client.get("/given").text
    assert "ses_xss_prompt" in recent and "fix the WAL checkpoint" in recent and XSS_SCRIPT not in recent
    one = client.get("/given/0").text
    assert "&lt;memoryd-context&gt;" in one and "Never push to main" in one
    assert "A hard rule of this project" in one and "Inventory:" in one


def test_try_a_prompt_shows_the_block_a_new_session_would_get(served, world: World) -> None:  # noqa: ANN001
    client = logged_in(served)
    page = client.get("/given", params={"project": str(world.project), "prompt": "how do we checkpoint the WAL"}).text
    tried = page.split('id="tried"', 1)[1]
    assert "## Relevant to the first prompt" in tried and "Use WAL mode" in tried
    assert "Chosen for the first prompt by the relevance ranking." in tried and "Rank 1, score" in tried
    elsewhere = client.get("/given", params={"project": "", "prompt": "how do we checkpoint the WAL"}).text
    assert "Use WAL mode" not in elsewhere.split('id="tried"', 1)[1]  # another project's memory is never given


def test_memoryd_ui_serves_standalone_when_no_daemon_runs(home, world: World) -> None:  # noqa: ANN001
    proc = subprocess.Popen(
        [sys.executable, "-m", "daemon", "ui", "--no-browser"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=os.environ.copy(),
    )  # fmt: skip
    try:
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/\?token=\S+", line).group(0)
        client = httpx.Client(follow_redirects=True)
        page = client.get(url)
        assert page.status_code == 200 and str(page.url).endswith("/") and "token=" not in str(page.url)
        assert "Use WAL mode" in client.get(url.split("?")[0] + "memories").text
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "Traceback" not in err, err
    assert (line + out).count("http://127.0.0.1") == 1  # the address, printed once


def test_a_project_that_is_no_folder_is_said_not_failed(served, world: World) -> None:  # noqa: ANN001
    client = logged_in(served)
    for path in ("/search?q=wal&project=/no/such/worktree", "/given?project=/no/such/worktree&prompt=wal"):
        answer = client.get(path)
        assert answer.status_code == 200 and "project /no/such/worktree: no such directory" in answer.text


@pytest.mark.parametrize("first", ["/given", "/memories", "/memories?kind=fact", "/sessions", "/search?q=wal", "/"])
def test_a_fresh_install_with_no_index_yet_reads_empty(home, first: str) -> None:  # noqa: ANN001
    from daemon.config import Config, load_settings
    from daemon.ui.server import start_viewer

    config = Config(*load_settings(None))
    assert not config.paths.index_db.exists()
    running = start_viewer(lambda: config, daemon=False)
    try:
        client = logged_in(running)
        answer = client.get(first)
        assert answer.status_code == 200, answer.text[-500:]
        assert "Traceback" not in answer.text
    finally:
        running.close()


def test_sessions_filter_by_the_agent_that_wrote_them(served, world: World) -> None:  # noqa: ANN001
    with open_workspace(world.config, world.project, explicit_project=True) as ws:
        for agent, title in (("claude", "Claude fixed the cache key"), ("codex", "Codex renamed the CLI flag")):
            remember(ws, kind="session", title=title, tags=["session", f"agent-{agent}"], body="## Outcome / Current State\n- done")
    client = logged_in(served)
    every = client.get("/sessions").text
    assert "Claude fixed the cache key" in every and "Codex renamed the CLI flag" in every and "flaky login" in every
    claude = client.get("/sessions", params={"agent": "claude"}).text
    assert "Claude fixed the cache key" in claude and "· Claude Code" in claude
    assert "Codex renamed the CLI flag" not in claude and "flaky login" not in claude
    codex = client.get("/sessions", params={"agent": "codex"}).text
    assert "Codex renamed the CLI flag" in codex and "Claude fixed the cache key" not in codex
    # An agent nobody knows filters nothing out (it is not a tag memoryd writes).
    assert "Claude fixed the cache key" in client.get("/sessions", params={"agent": "nobody"}).text


def test_emptying_the_tags_field_removes_the_tags(served, world: World) -> None:  # noqa: ANN001
    client = logged_in(served)
    mid, path = world.ids["wal"], world.file_of("wal")
    assert "sqlite" in path.read_text()
    form = client.get(f"/memories/{mid}/edit").text
    body = re.search(r"<textarea[^>]*>(.*?)</textarea>", form, re.S).group(1)
    answer = client.post(
        f"/memories/{mid}/edit",
        data={"csrf": csrf_of(client, f"/memories/{mid}/edit"), "description": "", "tags": "", "body": body},
    )
    assert answer.status_code == 303
    text = path.read_text()
    assert "sqlite" not in text and "Never VACUUM live." in text
    assert "sqlite" not in client.get(f"/memories/{mid}").text


def test_the_overview_has_a_row_for_every_agent(served, world: World) -> None:  # noqa: ANN001
    page = logged_in(served).get("/").text
    agents = page[page.index('id="h-agents"') :]
    assert "OpenCode" in agents and "Claude Code" in agents and "Codex" in agents

"""A project's `.memory` that is a link to a folder outside the project (a cloned
repository can point it at any folder the user can write) is not followed: nothing is
written there, its memories reach no session, and `memoryd status` and the daemon's log
say so once, with what to do; `memory.follow_outside_links` opts in."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.capture.test_note_names import add_session
from tests.service.conftest import daemon, daemon_env, notify, wait_for  # noqa: F401 - fixtures
from tests.service.test_daemon import session_notes

SECRET_MEMORY = "---\ntitle: Vault unseal ritual\nkind: fact\n---\nThe zebracorn unseal ritual needs three keys.\n"


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under `folder` (hidden ones too) with a hash of its bytes."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def memoryd(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "daemon", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=env)
    assert "Traceback" not in done.stderr, done.stderr
    return done


@pytest.fixture
def linked(home, fixture_db, tmp_path):
    """A project whose `.memory` links to a folder outside it, and a session that ran there."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "fact").mkdir(parents=True)
    (elsewhere / "fact" / "vault.md").write_text(SECRET_MEMORY)
    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    (project / ".memory").symlink_to(elsewhere)
    add_session(fixture_db, "ses_shop0000linked", 1_767_225_600_000, "Unseal the vault for staging.")
    conn = __import__("sqlite3").connect(fixture_db)
    with conn:
        conn.execute("UPDATE session SET directory = ? WHERE id = 'ses_shop0000linked'", (str(project),))
    conn.close()
    return project, elsewhere


def test_a_memory_link_out_of_its_project_is_not_followed(home, linked):
    project, elsewhere = linked
    before = snapshot(elsewhere)
    for args in (("distill", "--settle", "0"), ("compile",), ("sweep",),
                 ("remember", "-k", "fact", "-t", "Staging", "Staging deploys need the vault."),
                 ("distill", "--settle", "0", "--force")):
        done = memoryd(project, *args)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
    remembered = memoryd(project, "remember", "-k", "fact", "-t", "Second", "Another one.")
    assert snapshot(elsewhere) == before  # not one file written, changed or removed there
    assert "outside its project" in remembered.stdout + remembered.stderr  # and the caller is told why
    # Its memories reach no session, no search.
    block = memoryd(project, "context", "--prompt", "how do I unseal the vault with the zebracorn ritual?")
    assert block.returncode == 0 and "unseal ritual" not in block.stdout.lower()
    assert "unseal ritual" not in memoryd(project, "recall", "zebracorn").stdout.lower()
    # The session's note and the remembered memory went to the global tree.
    assert any("Unseal" in p.read_text() for p in (home.global_root / "sessions").glob("*.md"))
    assert list((home.global_root / "fact").glob("staging*.md"))
    # Status says it once, with what to do.
    text = memoryd(project, "status").stdout
    said = [line for line in text.splitlines() if str(project / ".memory") in line]
    assert len(said) == 1 and "not followed" in said[0] and "follow_outside_links" in said[0], text


def test_following_links_out_of_the_project_is_an_explicit_setting(home, linked):
    project, elsewhere = linked
    env = {**os.environ, "MEMORYD_MEMORY__FOLLOW_OUTSIDE_LINKS": "true"}
    assert memoryd(project, "distill", "--settle", "0", env=env).returncode == 0
    assert "Vault unseal ritual" in memoryd(project, "recall", "zebracorn", env=env).stdout
    assert "not followed" not in memoryd(project, "status", env=env).stdout


def test_the_daemon_warns_once_and_writes_nothing_through_the_link(home, linked, daemon, notify):  # noqa: F811
    project, elsewhere = linked
    before = snapshot(elsewhere)
    daemon.start()
    wait_for(lambda: len(session_notes(home)) >= 6, 60, "the first pass's notes")
    wait_for(lambda: "daemon.first_pass_done" in daemon.output(), 60, "the first pass")
    (project / "README.md").write_text("touch the project\n")
    assert memoryd(project, "remember", "-k", "fact", "-t", "Later", "Written while the daemon runs.").returncode == 0
    assert daemon.stop() == 0
    assert daemon.output().count('"tree.refused"') == 1, daemon.output()
    assert "Traceback" not in daemon.output()
    assert snapshot(elsewhere) == before


def test_a_category_folder_linked_out_of_its_tree_is_never_written_through(home, fixture_db, tmp_path):
    outside = tmp_path / "outside"
    (outside / "sessions").mkdir(parents=True)
    (outside / "fact").mkdir()
    home.global_root.mkdir(parents=True)
    for category in ("sessions", "fact"):
        (home.global_root / category).symlink_to(outside / category)
    distilled = memoryd(tmp_path, "distill", "--settle", "0")
    remembered = memoryd(tmp_path, "remember", "--global", "-k", "fact", "-t", "Deploys", "Through CI.")
    assert snapshot(outside) == {}
    assert remembered.returncode != 0 and "outside the memory tree" in remembered.stderr, remembered.stderr
    assert distilled.returncode == 0 and "outside the memory tree" in memoryd(tmp_path, "status").stdout

"""A session note (daemon/capture/notes.py): what it says, what its file is called, where it goes."""

from __future__ import annotations

from pathlib import Path

import frontmatter
import pytest

from daemon.capture.distill.base import Distilled
from daemon.capture.notes import choose_note_dir, note_filename, render_note, tree_of_note
from daemon.memory.roots import MemoryRoot
from daemon.opencode.reader import SessionInfo

KEY = "sk-proj-Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8Nn7"
CREATED = 1_700_000_000_000  # 2023-11-14T22:13:20Z
BODY = "## What Was Worked On\n\n- Fixed `scripts/deploy.sh` to use pnpm.\n"


def session(title: str = "Fix deploy script", directory: str = "/home/dev/src/webapp") -> SessionInfo:
    return SessionInfo(
        id="ses_0123456789abcdefXYZ",
        title=title,
        directory=directory,
        project_id="p1",
        parent_id=None,
        time_created=CREATED,
        time_updated=CREATED + 100_000,
    )


def distilled(body: str = BODY, summary: str = "Deploys use pnpm now") -> Distilled:
    return Distilled(junk=False, body=body, summary=summary, distiller="openai:qwen3:8b", prompt_version="v7")


def test_a_rendered_note_reads_back_with_its_frontmatter_provenance_and_body(tmp_path):
    path = tmp_path / "note.md"
    path.write_text(render_note(session(), distilled(), CREATED + 100_000), encoding="utf-8")
    note = frontmatter.load(path)
    assert note["title"] == "Fix deploy script" and note["description"] == "Deploys use pnpm now"
    assert note["kind"] == "session" and note["id"] == note["session_id"] == "ses_0123456789abcdefXYZ"
    assert note["project"] == "/home/dev/src/webapp" and note["tags"] == ["session", "webapp", "agent-opencode"]
    assert note["agent"] == "opencode"
    assert str(note["started"]).startswith("2023-11-14") and note["started"] != note["updated"]
    assert note["distiller"] == "openai:qwen3:8b" and note["prompt_version"] == "v7"
    provenance, body = note.content.split("\n\n", 1)
    assert provenance.startswith("> Source: OpenCode session `ses_0123456789abcdefXYZ`")
    assert "project `/home/dev/src/webapp`" in provenance
    assert body.strip() == BODY.strip()


def test_a_key_in_the_title_or_body_never_reaches_the_note(tmp_path):
    text = render_note(session(f"Rotate {KEY}"), distilled(f"{BODY}\n- Old key was {KEY}\n", ""), CREATED)
    assert KEY not in text
    note = frontmatter.loads(text)
    assert note["title"].startswith("Rotate ") and "REDACTED" in note["title"]


def test_an_untitled_session_is_named_by_its_summary():
    note = frontmatter.loads(render_note(session("   "), distilled(), CREATED))
    assert note["title"] == "Deploys use pnpm now"


def test_the_extractive_note_has_no_prompt_version():
    plain = Distilled(junk=False, body=BODY, summary="s")
    assert "prompt_version" not in frontmatter.loads(render_note(session(), plain, CREATED)).metadata


HOSTILE = [
    "../../etc/passwd",
    "a/b\\c:d*e?f",
    "\x00\x1b[31mred\x07",
    "..",
    "",
    ".hidden",
    "修复部署脚本" * 40,
    "x" * 500,
    f"leaked {KEY}",
]


@pytest.mark.parametrize("title", HOSTILE)
def test_a_hostile_title_still_gives_one_safe_file_in_the_folder(tmp_path, title):
    name = note_filename(session(title))
    assert name.startswith("2023-11-14-")
    assert name.endswith("-bcdefXYZ.md")  # the id's tail keeps names unique per session
    assert "/" not in name and "\\" not in name and not name.startswith(".")
    assert all(ch.isprintable() for ch in name) and KEY not in name
    assert len(name.encode("utf-8")) <= 255
    path = tmp_path / name
    path.write_text("x", encoding="utf-8")
    assert path.resolve().parent == tmp_path.resolve()


def test_the_file_name_is_stable_and_readable():
    assert note_filename(session("Fix deploy script")) == "2023-11-14-fix-deploy-script-bcdefXYZ.md"
    assert note_filename(session("Fix deploy script")) == note_filename(session("Fix deploy script"))


@pytest.fixture
def repo(tmp_path) -> Path:
    """A git worktree (a .git folder is enough for root discovery) with a subfolder."""
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "src").mkdir()
    return tmp_path / "repo"


def test_a_project_with_a_memory_tree_gets_its_notes(tmp_path, repo):
    (repo / ".memory").mkdir()
    where = choose_note_dir(session(directory=str(repo / "src")), "auto", MemoryRoot(tmp_path / "global", "global"))
    assert where == MemoryRoot(repo / ".memory", "project")


def test_a_project_without_a_memory_tree_sends_notes_to_the_global_tree(tmp_path, repo):
    global_root = MemoryRoot(tmp_path / "global", "global")
    assert choose_note_dir(session(directory=str(repo)), "auto", global_root) == global_root
    # Opting in by setting notes.target = "project" creates the project tree instead.
    assert choose_note_dir(session(directory=str(repo)), "project", global_root) == MemoryRoot(
        repo / ".memory", "project"
    )


def test_global_target_and_vanished_folders_go_to_the_global_tree(tmp_path, repo):
    global_root = MemoryRoot(tmp_path / "global", "global")
    (repo / ".memory").mkdir()
    assert choose_note_dir(session(directory=str(repo)), "global", global_root) == global_root
    for gone in ("", str(tmp_path / "deleted-checkout"), "/nonexistent/other-machine/src"):
        assert choose_note_dir(session(directory=gone), "project", global_root) == global_root


def test_a_note_on_disk_keeps_the_tree_it_lies_in(tmp_path, repo):
    global_root = MemoryRoot(tmp_path / "global", "global")
    project = MemoryRoot(repo / ".memory", "project")
    info = session(directory=str(repo))
    assert tree_of_note(global_root.path / "sessions" / "a.md", info, global_root) == global_root
    assert tree_of_note(project.path / "sessions" / "a.md", info, global_root) == project
    elsewhere = tmp_path / "old-target" / "sessions" / "a.md"
    assert tree_of_note(elsewhere, info, global_root) == MemoryRoot(tmp_path / "old-target", "project")

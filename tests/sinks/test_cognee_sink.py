"""The Cognee sink against a real Cognee 1.6 server on 127.0.0.1 (see conftest.py)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from click.testing import CliRunner

from daemon.cli.main import cli
from daemon.config import load_settings
from daemon.sinks.cognee import CogneeClient
from tests.capture.helpers import add_message
from tests.sinks.conftest import write_config


def run(*args: str, ok: bool = True):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result


def server_docs(home) -> tuple[CogneeClient, str, dict[str, dict]]:
    """The dataset's documents on the server, by the session id in their metadata."""
    settings, _ = load_settings()
    client = CogneeClient(settings.sinks.cognee)
    dataset_id = client.dataset_id()
    docs = client.documents(dataset_id) if dataset_id else []
    return client, dataset_id, {d["externalMetadata"]["memory_id"]: d for d in docs}


def notes(home) -> dict[str, Path]:
    """Session id → note file, read from the notes' frontmatter."""
    found = {}
    for path in (home.global_root / "sessions").glob("*.md"):
        if path.name == "index.md":
            continue
        for line in path.read_text().splitlines():
            if line.startswith("session_id:"):
                found[line.split(":", 1)[1].strip().strip('"')] = path
    return found


def test_notes_arrive_once_each_with_their_metadata(home, fixture_db, cognee_up, dataset, fixture_sessions):
    write_config(home.config, cognee_up.url, dataset, cognify="never")
    run("distill")
    written = notes(home)
    assert len(written) >= 5

    first = run("sink", "push")
    assert f"{len(written)} added" in first.output
    client, dataset_id, docs = server_docs(home)
    assert client.count(dataset_id) == len(written)
    assert set(docs) == set(written)
    deploy = fixture_sessions["deploy-pnpm"]
    meta = docs[deploy["session"]]["externalMetadata"]
    assert meta["session_id"] == deploy["session"]
    assert meta["project"] == deploy["project"]
    assert meta["kind"] == "session" and meta["source"] == "memoryd"
    assert meta["title"] and meta["started"].startswith("20") and meta["updated"].startswith("20")
    raw = client.raw(dataset_id, docs[deploy["session"]]["id"])
    assert raw == written[deploy["session"]].read_text()

    again = run("sink", "push")  # nothing changed: nothing sent, nothing doubled
    assert "0 added, 0 replaced, 0 deleted" in again.output
    assert client.count(dataset_id) == len(written)
    resent = run("sink", "push", "--all")  # sent again: identical content is one document there
    assert f"{len(written)} sent again" in resent.output
    assert client.count(dataset_id) == len(written)
    status = run("status").output
    assert f"{len(written)} documents delivered, 0 queued" in status
    client.close()


def test_continuing_a_session_replaces_its_document(home, fixture_db, cognee_up, dataset, fixture_sessions):
    write_config(home.config, cognee_up.url, dataset, cognify="never")
    run("distill")
    run("sink", "push")
    client, dataset_id, before = server_docs(home)
    count = client.count(dataset_id)
    session = fixture_sessions["deploy-pnpm"]["session"]

    newest = int(time.time() * 1000) - 120_000  # settled: older than settle_seconds
    add_message(fixture_db, session, "msg_zzzz_follow_up", "user",
                [("prt_zzzz_follow_up", {"type": "text", "text": "Also pin the node version to 22.11 in .nvmrc"})],
                newest)
    run("distill")
    assert "22.11" in notes(home)[session].read_text()
    result = run("sink", "push")
    assert "1 replaced" in result.output

    _, _, after = server_docs(home)
    assert client.count(dataset_id) == count
    assert after[session]["id"] != before[session]["id"]
    assert "22.11" in client.raw(dataset_id, after[session]["id"])
    client.close()


def test_forget_deletes_the_document_there(home, fixture_db, cognee_up, dataset, fixture_sessions):
    write_config(home.config, cognee_up.url, dataset, cognify="never")
    run("distill")
    run("sink", "push")
    client, dataset_id, before = server_docs(home)
    session = fixture_sessions["deploy-pnpm"]["session"]
    assert session in before

    run("forget", session)
    result = run("sink", "push")
    assert "1 deleted" in result.output
    _, _, after = server_docs(home)
    assert session not in after
    assert client.count(dataset_id) == len(before) - 1
    client.close()


def _many_notes(home, count: int) -> None:
    folder = home.global_root / "sessions"
    folder.mkdir(parents=True)
    for n in range(count):
        sid = f"ses_bulk{n:04d}"
        folder.joinpath(f"2026-01-01-bulk-{n:04d}.md").write_text(
            f'---\ntitle: "Bulk note {n}"\ndescription: "note {n}"\nkind: "session"\nid: "{sid}"\n'
            f'session_id: "{sid}"\nproject: "/src/bulk"\nstarted: "2026-01-01T00:00:00Z"\n'
            f'updated: "2026-01-01T00:00:00Z"\n---\n\nWorked on item {n}.\n'
        )


def test_killing_the_server_during_a_push_loses_nothing(home, cognee_up, dataset):
    total = 40
    write_config(home.config, cognee_up.url, dataset, cognify="never", batch_size=2, timeout_s=5)
    _many_notes(home, total)
    settings, _ = load_settings()
    watcher = CogneeClient(settings.sinks.cognee)

    def kill_when_some_arrived() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            dataset_id = watcher.dataset_id()
            if dataset_id and watcher.count(dataset_id) >= 6:
                cognee_up.kill()
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_when_some_arrived)
    killer.start()
    interrupted = run("sink", "push", ok=False)
    killer.join()
    assert interrupted.exit_code == 1, interrupted.output
    assert "delivery stopped" in interrupted.output
    status = run("status").output
    assert "queued" in status and "last error" in status

    cognee_up.start()
    run("sink", "push")
    dataset_id = watcher.dataset_id()
    docs = watcher.documents(dataset_id)
    assert watcher.count(dataset_id) == total
    assert sorted(d["externalMetadata"]["session_id"] for d in docs) == [f"ses_bulk{n:04d}" for n in range(total)]
    assert "0 queued" in run("status").output
    watcher.close()


def test_memories_go_too_with_include_memories_and_a_swept_one_is_deleted(home, cognee_up, dataset):
    write_config(home.config, cognee_up.url, dataset, cognify="never", include_memories=True)
    run("remember", "--global", "-k", "gotcha", "-t", "Staging needs the VPN", "--expires", "1d", "Connect first.")
    run("remember", "--global", "-k", "decision", "-t", "Use pnpm", "Lockfile in git.")
    assert "2 added" in run("sink", "push").output
    client, _, docs = server_docs(home)
    assert sorted(d["externalMetadata"]["kind"] for d in docs.values()) == ["decision", "gotcha"]

    gotcha = next(home.global_root.glob("gotcha/staging*.md"))
    gotcha.write_text(gotcha.read_text().replace("expires: ", "expires: 2020-01-01\nold_expires: "))
    run("sweep")
    assert "1 deleted" in run("sink", "push").output
    _, _, docs = server_docs(home)
    assert [d["externalMetadata"]["title"] for d in docs.values()] == ["Use pnpm"]
    client.close()


def test_login_from_variables_delivers_as_that_user(home, cognee_up, dataset, monkeypatch):
    import httpx

    email, password = f"{dataset}@example.com", "a-long-test-password"
    registered = httpx.post(f"{cognee_up.url}/api/v1/auth/register", json={"email": email, "password": password})
    assert registered.status_code == 201, registered.text
    monkeypatch.setenv("TEST_COGNEE_USER", email)
    monkeypatch.setenv("TEST_COGNEE_PASSWORD", password)
    write_config(home.config, cognee_up.url, dataset, cognify="never",
                 username_env="TEST_COGNEE_USER", password_env="TEST_COGNEE_PASSWORD")
    _many_notes(home, 3)
    assert "3 added" in run("sink", "push").output

    settings, _ = load_settings()
    with CogneeClient(settings.sinks.cognee) as logged_in:
        assert logged_in.count(logged_in.dataset_id()) == 3
    with CogneeClient(settings.sinks.cognee.model_copy(update={"username_env": ""})) as anonymous:
        assert anonymous.dataset_id() == ""  # the dataset is the logged-in user's

    monkeypatch.setenv("TEST_COGNEE_PASSWORD", "wrong")
    refused = run("sink", "push", "--all", ok=False)
    assert refused.exit_code == 1 and "LOGIN_BAD_CREDENTIALS" in refused.output


def test_cognify_is_requested_after_a_batch_and_its_status_shown(home, fixture_db, cognee_up, dataset):
    # Last in this file: a cognify with no model keeps this dataset busy for minutes.
    write_config(home.config, cognee_up.url, dataset, cognify="batch")
    run("distill")
    result = run("sink", "push")
    assert "cognify requested (run " in result.output
    status = run("sink", "status").output
    assert "cognify requested" in status
    assert f"of {len(notes(home))} documents processed" in status

"""Reading the log back: parse, filter, render, follow across rotation; `memoryd logs`."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
import structlog
from click.testing import CliRunner

from daemon.cli.main import cli
from daemon.logs import (
    FilePosition,
    LogEntry,
    entry_matches,
    follow_log,
    format_entry,
    log_files,
    parse_log_line,
    parse_since,
    read_log,
    setup_logging,
)

NOW = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC)


def record(minutes_ago: float, level: str, event: str, now: datetime = NOW, **fields) -> str:
    stamp = (now - timedelta(minutes=minutes_ago)).isoformat().replace("+00:00", "Z")
    return json.dumps({"event": event, "level": level, "timestamp": stamp, **fields})


def write_lines(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines))


# ---- parsing and rendering ----


def test_parse_log_line() -> None:
    entry = parse_log_line(record(0, "warning", "slow") + "\n")
    assert entry.record["event"] == "slow" and entry.level == "warning" and entry.time == NOW
    assert parse_log_line("Traceback (most recent call last):") == LogEntry("Traceback (most recent call last):", None)
    assert parse_log_line("42").record is None  # JSON, but not a record
    assert parse_log_line('{"event": "x", "timestamp": "yesterday"}').time is None


def test_format_entry_is_readable() -> None:
    line = record(0, "info", "session_distilled", session="ses_1", chars=1200, title="two words", tags=["a", "b"])
    text = format_entry(parse_log_line(line), tz=UTC)
    assert text == (
        '2025-06-01 12:00:00 INFO    session_distilled session=ses_1 chars=1200 title="two words" tags=["a", "b"]'
    )


def test_format_entry_in_another_zone_and_with_a_traceback() -> None:
    line = record(0, "error", "pass_failed", exception="Traceback (most recent call last):\n  boom\nValueError: x")
    text = format_entry(parse_log_line(line), tz=timezone(timedelta(hours=2)))
    assert text.splitlines() == [
        "2025-06-01 14:00:00 ERROR   pass_failed",
        "    Traceback (most recent call last):",
        "      boom",
        "    ValueError: x",
    ]


def test_format_keeps_a_line_that_is_not_json() -> None:
    assert format_entry(parse_log_line("plain text, as is")) == "plain text, as is"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("10m", NOW - timedelta(minutes=10)),
        ("1h", NOW - timedelta(hours=1)),
        ("1h30m", NOW - timedelta(minutes=90)),
        ("1.5h", NOW - timedelta(minutes=90)),
        ("2d", NOW - timedelta(days=2)),
        ("45s", NOW - timedelta(seconds=45)),
        ("1w", NOW - timedelta(days=7)),
        ("2025-05-31T10:00:00Z", datetime(2025, 5, 31, 10, tzinfo=UTC)),
        ("2025-05-31T10:00:00+02:00", datetime(2025, 5, 31, 8, tzinfo=UTC)),
    ],
)
def test_parse_since(text: str, expected: datetime) -> None:
    assert parse_since(text, NOW) == expected


def test_parse_since_without_a_zone_is_local_time() -> None:
    assert parse_since("2025-05-31 10:00", NOW) == datetime(2025, 5, 31, 10, 0).astimezone()
    assert parse_since("2025-05-31", NOW) == datetime(2025, 5, 31).astimezone()


@pytest.mark.parametrize("text", ["", "yesterday", "10", "10x", "m10"])
def test_parse_since_refuses_nonsense_with_examples(text: str) -> None:
    with pytest.raises(ValueError, match="1h30m"):
        parse_since(text, NOW)


def test_entry_matches_filters_by_time_and_level() -> None:
    old_info = parse_log_line(record(120, "info", "old"))
    new_warning = parse_log_line(record(1, "warning", "new"))
    debug = parse_log_line(record(1, "debug", "chatter"))
    plain = parse_log_line("not json")
    since = NOW - timedelta(minutes=10)
    assert not entry_matches(old_info, since=since)
    assert entry_matches(new_warning, since=since, min_level="warning")
    assert not entry_matches(debug, min_level="info")
    assert entry_matches(new_warning, min_level="info")
    assert entry_matches(plain, since=since, min_level="error"), "filters cannot judge it, so it shows"


# ---- reading files ----


def test_read_log_takes_the_last_entries_across_backups(tmp_path: Path) -> None:
    path = tmp_path / "memoryd.log"
    write_lines(tmp_path / "memoryd.log.2", [record(50, "info", "e1"), record(40, "info", "e2")])
    write_lines(tmp_path / "memoryd.log.1", [record(30, "info", "e3")])
    write_lines(path, [record(20, "info", "e4"), record(10, "error", "e5")])
    (tmp_path / "memoryd.log.bak").write_text("not a backup\n")
    assert log_files(path) == [tmp_path / "memoryd.log.2", tmp_path / "memoryd.log.1", path]

    entries, position = read_log(path, last=4)
    assert [e.record["event"] for e in entries] == ["e2", "e3", "e4", "e5"]
    assert position == FilePosition(path.stat().st_ino, path.stat().st_size)
    entries, _ = read_log(path, last=1)
    assert [e.record["event"] for e in entries] == ["e5"]
    entries, _ = read_log(path, min_level="error")
    assert [e.record["event"] for e in entries] == ["e5"]
    entries, position = read_log(path, last=0)
    assert entries == [] and position == FilePosition(path.stat().st_ino, path.stat().st_size)


def test_read_log_since_skips_backups_written_before_it(tmp_path: Path) -> None:
    path = tmp_path / "memoryd.log"
    now = datetime.now(UTC)
    old = tmp_path / "memoryd.log.1"
    write_lines(old, [record(300, "info", "ancient", now=now)])
    stamp = (now - timedelta(hours=5)).timestamp()
    os.utime(old, (stamp, stamp))
    write_lines(path, [record(90, "info", "before", now=now), record(5, "info", "recent", now=now)])
    entries, _ = read_log(path, since=now - timedelta(hours=1))
    assert [e.record["event"] for e in entries] == ["recent"]
    entries, _ = read_log(path, since=now - timedelta(hours=6))
    assert [e.record["event"] for e in entries] == ["ancient", "before", "recent"]


def test_read_log_leaves_a_half_written_line_to_follow(tmp_path: Path) -> None:
    path = tmp_path / "memoryd.log"
    path.write_text(record(1, "info", "whole") + "\n" + '{"event": "ha')
    entries, position = read_log(path)
    assert [e.record["event"] for e in entries] == ["whole"]
    assert position.offset == len(record(1, "info", "whole")) + 1



def test_reads_what_setup_logging_writes(tmp_path: Path, restore_logging) -> None:
    path = tmp_path / "state" / "memoryd.log"
    setup_logging(level="debug", log_file=path, stderr=False)
    log = structlog.get_logger("memoryd")
    log.info("pass_done", sessions=3, note_path="/a b/c.md")
    log.warning("slow_model", seconds=42.5)
    logging.getLogger("httpx").warning("foreign %s", "library")
    entries, _ = read_log(path)
    events = [e.record["event"] for e in entries]
    assert events == ["pass_done", "slow_model", "foreign library"]
    assert all(e.time is not None and e.level for e in entries)
    text = format_entry(entries[0], tz=UTC)
    assert "INFO    pass_done sessions=3 note_path=\"/a b/c.md\"" in text


# ---- following ----


def test_follow_across_partial_lines_rotation_and_truncation(tmp_path: Path) -> None:
    path = tmp_path / "memoryd.log"
    path.write_text("old\n")
    _, position = read_log(path)
    seen: list[str] = []
    reached = {name: threading.Event() for name in ("a3", "b2")}
    failures: list[BaseException] = []

    def writer() -> None:
        try:
            with path.open("a") as log:
                for text in ("a1\n", "a2\n", "a", "3\n"):  # a line written in two pieces
                    log.write(text)
                    log.flush()
                    time.sleep(0.02)
            assert reached["a3"].wait(5)
            with path.open("a") as log:
                log.write("a4\n")  # the last line before the rotation
            path.rename(tmp_path / "memoryd.log.1")
            time.sleep(0.1)  # the log is briefly missing, as between rename and reopen
            with path.open("a") as log:
                log.write("b1\nb2\n")
            assert reached["b2"].wait(5)
            path.write_text("c1\n")  # truncated in place (copytruncate), then written
        except BaseException as exc:  # handed to the main thread, which fails the test
            failures.append(exc)

    thread = threading.Thread(target=writer)
    deadline = time.monotonic() + 10
    thread.start()
    try:
        for line in follow_log(path, start=position, stop=lambda: time.monotonic() > deadline or "c1" in seen, poll_s=0.01):
            seen.append(line)
            if line in reached:
                reached[line].set()
    finally:
        for event in reached.values():
            event.set()
        thread.join()
    assert not failures, failures
    assert seen == ["a1", "a2", "a3", "a4", "b1", "b2", "c1"]


def test_follow_from_the_end_and_a_file_that_appears_later(tmp_path: Path) -> None:
    path = tmp_path / "memoryd.log"
    path.write_text("history\n")
    def append(_seconds: float) -> None:  # the "sleep" between polls is when a line arrives
        with path.open("a") as log:
            log.write("new\n")

    lines = follow_log(path, stop=lambda: False, poll_s=0.01, sleep=append)
    assert next(lines) == "new"
    lines.close()

    missing = tmp_path / "later.log"
    appear = follow_log(missing, stop=lambda: False, poll_s=0.01, sleep=lambda _: missing.write_text("first\n"))
    assert next(appear) == "first"
    appear.close()


# ---- the command ----


@pytest.fixture
def log_file(home) -> Path:
    now = datetime.now(UTC)
    path = home.state_dir / "memoryd.log"
    write_lines(
        path,
        [
            record(180, "info", "long_ago", now=now),
            record(5, "debug", "tick", now=now),
            record(4, "info", "pass_done", now=now, sessions=2),
            "a stray line",
            record(3, "warning", "slow_model", now=now, seconds=31),
            record(2, "error", "distill_failed", now=now, session="ses_9"),
        ],
    )
    return path


def invoke(*args: str):
    return CliRunner().invoke(cli, ["logs", *args], catch_exceptions=False)


def test_logs_shows_readable_lines(log_file: Path) -> None:
    result = invoke()
    assert result.exit_code == 0, result.output
    out = result.stdout.splitlines()
    assert len(out) == 6
    assert out[2].endswith("INFO    pass_done sessions=2")
    assert out[3] == "a stray line"
    assert "ERROR   distill_failed session=ses_9" in out[5]


def test_logs_level_since_lines_and_json(log_file: Path) -> None:
    assert [l.split()[3] for l in invoke("--level", "warning").stdout.splitlines() if l != "a stray line"] == [
        "slow_model",
        "distill_failed",
    ]
    since = invoke("--since", "10m").stdout
    assert "long_ago" not in since and "tick" in since and "distill_failed" in since
    assert invoke("-n", "1").stdout.splitlines()[0].endswith("distill_failed session=ses_9")
    raw = invoke("--json", "--level", "error").stdout.splitlines()
    assert raw[0] == "a stray line" and json.loads(raw[1])["event"] == "distill_failed"


def test_logs_follow_ends_cleanly_on_ctrl_c(log_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_follow(path, start=None, **_):
        assert path == log_file and start is not None
        yield record(0, "info", "live", now=datetime.now(UTC))
        yield record(0, "debug", "hidden", now=datetime.now(UTC))
        raise KeyboardInterrupt

    monkeypatch.setattr("daemon.logs.follow_log", fake_follow)
    result = invoke("-f", "-n", "0", "--level", "info")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1].endswith("INFO    live")
    assert "hidden" not in result.stdout and "Traceback" not in result.output


def test_logs_without_a_log_file_says_how_to_start(home) -> None:
    result = invoke()
    assert result.exit_code == 1
    assert "no log at" in result.stderr and "memoryd service install" in result.stderr


def test_logs_with_a_bad_since_is_a_usage_error(log_file: Path) -> None:
    result = invoke("--since", "yesterday")
    assert result.exit_code == 2 and "--since" in result.stderr and "10m" in result.stderr


def test_logs_help_mentions_the_journal() -> None:
    result = CliRunner().invoke(cli, ["logs", "--help"])
    assert "journalctl --user -u memoryd" in " ".join(result.output.split())


def test_no_secret_reaches_the_log_file(tmp_path: Path, restore_logging) -> None:
    """Every event passes the scrubber: structlog fields, nested values and stdlib messages."""
    path = tmp_path / "memoryd.log"
    setup_logging(level="debug", log_file=path, stderr=False)
    key = "sk-proj-Ab3dEf5hIj7kLm9nOp1qRs3tUv5wXy7zAb9cDe1fGh3iJk"
    structlog.get_logger("memoryd").warning("model.failed", error=f"401 for key {key}", headers={"authorization": f"Bearer {key}"})
    logging.getLogger("memoryd.memory.commands").warning("memory.refused", extra={"body": f"OPENAI_API_KEY={key}"})
    logging.getLogger("httpx").error("request with AKIAIOSFODNN7EXAMPLE failed")
    text = path.read_text()
    assert key not in text and "AKIAIOSFODNN7EXAMPLE" not in text
    assert text.count("[REDACTED:") >= 3
    assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_a_pass_that_did_nothing_stays_out_of_memoryd_logs(home, fixture_db) -> None:
    """`memoryd logs` shows work: a pass with nothing new is a debug line, not 'pass.done distilled=0'."""

    def memoryd(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "daemon", *args], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    memoryd("distill", "--settle", "0")
    memoryd("distill", "--settle", "0")  # nothing new
    log_file = home.state_dir / "memoryd.log"
    records = [json.loads(line) for line in log_file.read_text().splitlines()]
    # At the default level (info) the idle pass is not even written.
    assert [(r["level"], r["distilled"]) for r in records if r["event"] == "pass.done"] == [("info", 6)]
    shown = memoryd("logs", "--lines", "200")
    assert shown.count("pass.done") == 1 and "distilled=6" in shown

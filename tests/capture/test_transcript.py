"""Transcript: roles, per-type treatment, bounds, and bad rows that do not sink a session."""

from __future__ import annotations

import json

from daemon.capture.transcript import Limits, build_transcript
from daemon.opencode.reader import MessageRow, OpenCodeReader, PartRow, SessionInfo, SessionRows

SESSION = SessionInfo("ses_x", "Title", "/w", "p", None, 1, 2, 2)


def rows(*parts: tuple[str, str, object], roles=("user", "assistant")) -> SessionRows:
    messages = [MessageRow(f"msg_{i}", i, json.dumps({"role": r}).encode()) for i, r in enumerate(roles)]
    out = []
    for n, (msg, _kind, data) in enumerate(parts):
        raw = data if isinstance(data, bytes) else json.dumps(data).encode()
        out.append(PartRow(f"prt_{n:03d}", msg, raw))
    return SessionRows(SESSION, messages, out)


def test_fixture_session_roles_and_types(fixture_db, fixture_sessions):
    with OpenCodeReader(fixture_db) as reader:
        info = reader.sessions([fixture_sessions["missing-file"]["session"]])[0]
        t = build_transcript(reader.session_rows(info))
    assert t.text.index("[user]") < t.text.index("[assistant")
    assert "[assistant · tool read]" in t.text and "✗ error: File not found" in t.text
    assert "SECRET-THOUGHT-7731" not in t.text  # reasoning never kept
    assert "reasoning" in t.text  # but its place is marked
    assert "step-start" not in t.text and "step-finish" not in t.text
    assert t.hash.startswith("sha256:")


def test_budget_keeps_head_and_tail_with_marker():
    long_user = "U" * 9000
    long_end = "E" * 9000
    t = build_transcript(
        rows(("msg_0", "text", {"type": "text", "text": long_user}), ("msg_1", "text", {"type": "text", "text": long_end})),
        Limits(total=5000, head=1000, part_text=20000),
    )
    assert "characters of the middle of this session omitted" in t.text
    assert len(t.text) < 5200
    assert t.text.rstrip().endswith("E")


def test_tool_output_has_its_own_cap_and_keeps_the_end():
    log = "line ok\n" * 1_300_000 + "FATAL TimeoutError at the end"  # ~10 MB
    t = build_transcript(
        rows(("msg_1", "tool", {"type": "tool", "tool": "bash", "state": {"status": "completed", "input": {"command": "cat big.log"}, "output": log}}))
    )
    (tool,) = [e for e in t.entries if e.kind == "tool"]
    assert len(tool.output) < 2000
    assert tool.output.endswith("FATAL TimeoutError at the end")
    assert "chars omitted" in tool.output


def test_secret_cut_by_a_clip_never_survives_half_redacted():
    key = "sk-proj-" + "A1b2C3d4" * 8
    output = "x" * 1480 + key + "y" * 5000
    t = build_transcript(rows(("msg_1", "tool", {"type": "tool", "tool": "bash", "state": {"status": "completed", "input": {}, "output": output}})))
    assert key[:20] not in t.text and key[-20:] not in t.text


def test_bad_rows_are_skipped_with_a_warning_naming_them():
    t = build_transcript(
        rows(
            ("msg_0", "text", {"type": "text", "text": "please fix deploy.sh"}),
            ("msg_1", "bad", b"{not json"),
            ("msg_1", "bytes", b'{"type":"text","text":"caf\xff ok"}'),
            ("msg_1", "odd", {"type": "hologram", "x": 1}),
            ("msg_1", "list", b"[1,2]"),
            ("msg_1", "text", {"type": "text", "text": "done"}),
        )
    )
    joined = "\n".join(t.warnings)
    assert "session ses_x part prt_001: malformed JSON" in joined
    assert "part prt_002: data is not valid UTF-8" in joined
    assert "prt_003: unknown part type 'hologram'" in joined
    assert "prt_004" in joined
    assert "please fix deploy.sh" in t.text and "caf\ufffd ok" in t.text and "done" in t.text


def test_other_part_types_are_one_line_mentions():
    t = build_transcript(
        rows(
            ("msg_1", "patch", {"type": "patch", "files": ["/w/a.py", "/w/b.py"]}),
            ("msg_1", "file", {"type": "file", "filename": "shot.png", "url": "data:..."}),
            ("msg_1", "compaction", {"type": "compaction"}),
        )
    )
    assert "changed files: /w/a.py, /w/b.py" in t.text
    assert "attached file shot.png" in t.text
    assert "context was compacted" in t.text


def test_same_rows_same_hash_and_any_change_moves_it():
    a = rows(("msg_0", "t", {"type": "text", "text": "hello there, fix it"}))
    b = rows(("msg_0", "t", {"type": "text", "text": "hello there, fix it!"}))
    assert build_transcript(a).hash == build_transcript(a).hash
    assert build_transcript(a).hash != build_transcript(b).hash


def test_an_empty_tool_output_falls_back_to_metadata_output():
    streamed = {
        "type": "tool",
        "tool": "bash",
        "state": {
            "status": "completed",
            "input": {"command": "pytest -q"},
            "output": "",
            "metadata": {"output": "FAILED tests/test_api.py::test_login - AssertionError"},
        },
    }
    plain = {"type": "tool", "tool": "bash", "state": {"status": "completed", "input": {"command": "ls"}, "output": "a.py",
                                                       "metadata": {"output": "stale copy"}}}
    t = build_transcript(rows(("msg_1", "tool", streamed), ("msg_1", "tool", plain)))
    tools = [e for e in t.entries if e.kind == "tool"]
    assert tools[0].output == "FAILED tests/test_api.py::test_login - AssertionError"
    assert tools[1].output == "a.py"  # a real output wins over metadata
    assert "AssertionError" in t.text


def test_a_prompt_stored_as_a_json_literal_reads_as_typed_and_a_typed_quote_stays():
    from daemon.opencode import v2rows

    stored = json.dumps('the log says {"msg":"Could not load the \\"sharp\\" module"}') + '\n\n<file name="a.txt">\nx\n</file>'
    messages, parts = v2rows.normalise([("m1", "user", 1, json.dumps({"text": stored}).encode()),
                                        ("m2", "user", 2, json.dumps({"text": '"foo" is broken'}).encode())])
    t = build_transcript(SessionRows(SESSION, messages, parts))
    asked = [e.text for e in t.entries if e.kind == "text"]
    assert asked[0].startswith('the log says {"msg":"Could not load the \\"sharp\\" module"}\n\n<file name="a.txt">')
    assert asked[1] == '"foo" is broken'  # not a literal: a quote the user typed


def test_a_shell_commands_exit_status_is_read_from_its_metadata():
    ran = {"type": "tool", "tool": "bash", "state": {"status": "completed", "input": {"command": "grep -rn ERROR logs/"},
                                                     "output": "logs/a.log:1: ERROR x", "metadata": {"exit": 0}}}
    failed = {"type": "tool", "tool": "bash", "state": {"status": "completed", "input": {"command": "make"},
                                                        "output": "boom", "metadata": {"exit": 2}}}
    t = build_transcript(rows(("msg_1", "tool", ran), ("msg_1", "tool", failed)))
    assert [e.exit for e in t.entries if e.kind == "tool"] == [0, 2]

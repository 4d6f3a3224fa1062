"""Withdrawn statements, first real error lines, descriptions with content: the pure rules."""

from __future__ import annotations

import pytest

from daemon.capture.distill import cues
from daemon.capture.distill.base import Entry
from daemon.capture.distill.describe import description, has_content, language_of
from daemon.capture.distill.problems import failing_line, first_error_line
from daemon.capture.distill.supersede import ALL, FIXES, find_superseded, render_attempt, retraction_scope
from daemon.capture.distill.turns import split_turns

RETRACTIONS = [
    ("That didn't hold up: the stress run stalls again.", ALL),
    ("That was not it; the cache is fine.", ALL),
    ("Memory is not the cause after all.", ALL),
    ("Turns out that was a red herring.", ALL),
    ("The test still fails with the same assertion.", FIXES),
    ("My first fix only moved the problem.", FIXES),
    ("I reverted the change to pool.py.", FIXES),
    ("Adding the retry made no difference.", FIXES),
    ("不对，内存不是原因。", ALL),
    ("改了超时之后还是失败。", FIXES),
    ("这个修复没用。", FIXES),
    ("違いました。大文字小文字の問題ではありません。", ALL),
    ("その修正は効かなかった。", FIXES),
    ("まだ 3 回に 1 回は落ちます。", FIXES),
    ("안 됐습니다.", FIXES),
    ("여전히 같은 오류가 납니다.", FIXES),
    ("캐시는 원인이 아니었습니다.", ALL),
    # other wordings of the same behaviour
    ("Unfortunately that didn't resolve it.", FIXES),
    ("The error persists after the restart.", FIXES),
    ("Nope, the endpoint still returns 500.", FIXES),
    ("My assumption was wrong: the header is set.", ALL),
    ("改完之后问题依旧。", FIXES),
    ("配置没有生效。", FIXES),
    ("キャッシュを消しても解消されません。", FIXES),
    ("同じエラーが出ます。", FIXES),
    ("재시작해도 변화가 없습니다.", FIXES),
    ("제가 잘못 판단했습니다.", ALL),
    ("The tests are red again.", FIXES),
    ("It keeps crashing after the patch.", FIXES),
    ("This turned out to be wrong.", ALL),
    ("我之前的判断是错的。", ALL),
    ("还是不行，页面还是白屏。", FIXES),
    ("前の修正では直りませんでした。", FIXES),
    ("여전히 안 됩니다.", FIXES),
    # a third hand's wordings
    ("Scratch that: the clone changed nothing.", ALL),
    ("nope, same error.", FIXES),
    ("I rolled the clone back.", FIXES),
    ("The proxy_read_timeout change was not it, so I reverted it.", ALL),
    ("还是不行，报的还是同一个 ERESOLVE。", FIXES),
    ("package.json 已经改回去了。", FIXES),
    ("やっぱりダメでした。", FIXES),
    ("conftest.py の変更は元に戻しました。", FIXES),
    ("credential 설정은 원래대로 되돌렸습니다.", FIXES),
    ("That wasn't enough: the planner still does a seq scan.", FIXES),
    ("やっぱりダメです。", FIXES),
    ("그래도 안 돼요.", FIXES),
    ("没解决，还是 403。", FIXES),
    ("Same thing happens after the restart.", FIXES),
    ("The error came back after a minute.", FIXES),
    ("Doesn't seem to help.", FIXES),
    ("I was mistaken about the cache.", ALL),
    ("依旧报错。", FIXES),
    ("问题还在。", FIXES),
    ("まだ直っていません。", FIXES),
    ("変更を戻しました。", FIXES),
    ("설정을 원복했습니다.", FIXES),
    ("문제가 그대로입니다.", FIXES),
]
NOT_RETRACTIONS = [
    "REDIS_URL still points to the old host redis-old:6379.",
    "发现 REDIS_URL 仍然指向旧主机。",
    "If that doesn't work, we can pin the version.",
    "Does it still fail for you?",
    "Reverted commits are listed in CHANGELOG.md.",
    "The deploy works and the smoke test passes.",
    "这个变量没用到。",
    "Add a regression test so the cookie can't grow like that again.",
    "CI is green again.",
    "The old code path was never exercised.",
    "すべてのテストが通りました。",
    "모든 테스트가 통과했습니다.",
    "配置是错的，端口应该是 8443。",
    # a new failure after the fix held: the fix is not taken back
    "CI is still red on the branch, but now it is cargo clippy that fails.",
    "还是报错，但现在是另一个模块。",
    "まだ落ちますが、今度は別のテストです。",
    "여전히 실패하지만 이번에는 다른 오류입니다.",
    "It's back online and serving traffic now.",
    "The backend is back to 12 ms.",
]


@pytest.mark.parametrize(("sentence", "scope"), RETRACTIONS, ids=[r[0][:20] for r in RETRACTIONS])
def test_wording_that_takes_a_claim_back_in_each_language(sentence, scope):
    assert retraction_scope(sentence) == scope


@pytest.mark.parametrize("sentence", NOT_RETRACTIONS)
def test_wording_that_takes_nothing_back(sentence):
    assert retraction_scope(sentence) is None


def _turns(*steps: tuple[str, str]):
    entries = []
    for role, value in steps:
        if role == "tool":
            entries.append(Entry("assistant", "tool", tool="bash", input={"command": "make"}, output=value,
                                 status="completed"))
        else:
            entries.append(Entry(role, "text", text=value))
    return split_turns(entries)


def test_a_fix_reported_broken_by_the_user_is_a_failed_attempt_and_the_cause_stays():
    turns = _turns(
        ("user", "The cache never expires in app/cache.py."),
        ("assistant", "The root cause is that ttl is read as minutes. Changed the ttl to seconds in app/cache.py."),
        ("user", "It still never expires after your change, please look again."),
        ("assistant", "Entries now expire: the sweeper thread was never started, app/cache.py starts it on import."),
    )
    found = find_superseded(turns)
    assert [a.claims for a in found.attempts] == [["Changed the ttl to seconds in app/cache.py."]]
    line = render_attempt(found.attempts[0], "en")
    assert line.startswith("Tried: Changed the ttl") and line.endswith("did not work: the user reported it still broken "
                                                                     "(next request)")
    assert "It still never expires" not in line  # the request is in What Was Worked On, not quoted again


def test_a_finding_that_names_the_real_cause_corrects_the_earlier_one():
    turns = _turns(
        ("user", "Why is the page slow?"),
        ("assistant", "The cause is the N+1 query in views.py."),
        ("assistant", "The real cause is the missing index on orders.user_id: the query plan shows a seq scan."),
    )
    found = find_superseded(turns)
    assert found.attempts[0].claims == ["The cause is the N+1 query in views.py."]


def test_a_guess_falls_with_its_fix_and_an_observation_stays():
    turns = _turns(
        ("user", "The nightly job stopped."),
        ("assistant", "The cause is probably an expired password. Updated ~/.pgpass with the new one."),
        ("assistant", "Updating .pgpass did not help."),
        ("assistant", "The batch user was moved to LDAP yesterday, password logins are refused."),
        ("assistant", "The job is still stopped until an LDAP service account exists."),
    )
    found = find_superseded(turns)
    assert found.attempts[0].claims == ["The cause is probably an expired password.", "Updated ~/.pgpass with the new one."]
    assert len(found.attempts) == 1  # the LDAP observation is not a fix the blocked state takes back


def test_always_and_never_make_a_decision_only_as_a_rule():
    assert cues.kind_of("The effect starts an interval and never clears it.") is None
    assert cues.kind_of("Never call .result() on the loop thread.") == cues.DECISION
    assert cues.kind_of("Keys live in the vault; never hard-code them.") == cues.DECISION


def test_a_cause_whose_fix_did_not_help_falls_when_a_later_finding_names_another():
    turns = _turns(
        ("user", "Fix the link error."),
        ("assistant", "Root cause: the define is missing. Added it to CMakeLists.txt."),
        ("tool", "/usr/bin/ld: undefined reference to `f'\ncollect2: error: ld returned 1 exit status"),
        ("assistant", "That did not help."),
        ("assistant", "Found it: the system libfoo 1.2 is linked instead of the vendored one."),
    )
    found = find_superseded(turns)
    assert found.attempts[0].claims == ["Root cause: the define is missing.", "Added it to CMakeLists.txt."]
    assert "undefined reference" in found.attempts[0].reason  # the bare retraction borrows the error


ERRORS = [
    ("[stress] tick 1 ok\n[stress] ERROR stall detected\nTraceback (most recent call last):", "[stress] ERROR stall detected"),
    ("Applying: x.sql\nError: pq: could not create unique index", "Error: pq: could not create unique index"),
    ("[ 97%] Linking\n/usr/bin/ld: a.o: undefined reference to `g'\ncollect2: error: ld returned 1",
     "/usr/bin/ld: a.o: undefined reference to `g'"),
    ("│ Error: Error acquiring the state lock", "Error: Error acquiring the state lock"),
    (" ❯ usePolling (2) 1 failed\nAssertionError: expected 3, got 5", "AssertionError: expected 3, got 5"),
    ("Tests 1 failed | 1 passed\n 1 failed", ""),
    ("Liveness: http-get :8080 timeout=1s\nWarning Unhealthy probe failed: deadline exceeded",
     "Warning Unhealthy probe failed: deadline exceeded"),
    ("src/a.c:3:5: warning: unused x\n0 errors", ""),
    ("   Compiling thiserror v1.0.6\nerror[E0502]: cannot borrow `*self` as mutable",
     "error[E0502]: cannot borrow `*self` as mutable"),
    ("test result: ok. 31 passed; 0 failed; 0 ignored", ""),
    ("collected 3 items\nFAILED tests/test_a.py::test_x - assert 1 == 2", "FAILED tests/test_a.py::test_x - assert 1 == 2"),
    ("npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree",
     "npm ERR! code ERESOLVE — npm ERR! ERESOLVE unable to resolve dependency tree"),
    ("remote: Write access to repository not granted.\nfatal: unable to access 'x': 403",
     "fatal: unable to access 'x': 403"),
    ("test a::b ... FAILED\nthread 'a::b' panicked at src/a.rs:4:9:\nassertion `left == right` failed",
     "thread 'a::b' panicked at src/a.rs:4:9"),
    # a wrapper's line gives way to the one that says why; a short one keeps its code in front
    ("error: linking with `cc` failed: exit status: 1\n  = note: /usr/bin/ld: cannot find -lssl",
     "/usr/bin/ld: cannot find -lssl"),
    ("npm error code E401\nnpm error 401 Unauthorized - GET https://r/x", "npm error code E401 — npm error 401 Unauthorized "
     "- GET https://r/x"),
    ("make: *** [Makefile:12: all] Error 2", "make: *** [Makefile:12: all] Error 2"),
]


@pytest.mark.parametrize(("output", "line"), ERRORS, ids=[e[1][:20] or "none" for e in ERRORS])
def test_the_first_real_error_line_of_an_output(output, line):
    assert first_error_line(output) == line


def test_a_read_tools_output_and_a_log_shown_by_cat_are_no_failed_command():
    source = Entry("assistant", "tool", tool="read", input={"filePath": "a.py"}, output='raise PoolError("closed")')
    assert failing_line(source) == ""
    log = Entry("assistant", "tool", tool="bash", input={"command": "tail -n 50 app.log"}, output="ERROR boom")
    assert failing_line(log) == "`tail -n 50 app.log` shows: ERROR boom"


def test_plans_and_decisive_findings():
    assert cues.is_plan("The cleanup runs, so I'll fix the hook itself.")
    assert cues.is_plan("Releasing the lock should fix the apply.")
    assert not cues.is_plan("Moved the await out of the lock block.")
    for sentence in ("Found it: _refill() blocks the loop.", "找到了：超时只有 1 秒。", "判明しました: 重複は1件です。",
                     "원인은 시스템 libzstd 1.4.8입니다.", "Confirmed: the job re-takes the lock.",
                     "That explains the 502: the app closes bodies over 10 MB.", "其实是 CSRF 校验拦住了。",
                     "Turns out it was the GC horizon comparison.", "難しい理由は pandas 2.2 の既定値です。"):
        assert cues.is_decisive(sentence), sentence
    assert not cues.is_decisive("The cause is probably the cache.")


def test_a_description_says_what_was_done_in_the_sessions_language():
    assert not has_content("修正しました。") and not has_content("Fixed.") and not has_content("빌드가 성공했습니다.")
    assert description(["修正しました。重複行を DELETE してから users_email_key を作ります。"], "", [], "ja").startswith(
        "修正しました。重複行を DELETE")
    assert description(["Done."], "", ["`a.py` (edited)"], "en") == "No result stated; touched a.py."
    assert description([], "", [], "ko") == "세션에 결과가 적혀 있지 않습니다."
    assert [language_of([t]) for t in ("直してください", "고쳐 주세요", "帮我看看", "fix it")] == ["ja", "ko", "zh", "en"]


def test_a_later_turn_that_calls_the_first_fix_incomplete_reaches_back_to_it():
    turns = _turns(
        ("user", "The spinner never stops."),
        ("assistant", "Fixed: the spinner now stops when the request settles."),
        ("user", "Picking this back up."),
        ("assistant", "The loader is mounted twice on the settings page."),
        ("assistant", "So my first fix did not help there."),
    )
    found = find_superseded(turns)
    assert found.attempts[0].claims == ["Fixed: the spinner now stops when the request settles."]
    assert render_attempt(found.attempts[0], "en").startswith("Tried: the spinner now stops")


def test_a_markdown_heading_is_no_sentence():
    from daemon.capture.distill.turns import sentences

    assert sentences("## 対応内容\n\n- ci.yml で npm run build を前に移動しました。") == ["ci.yml で npm run build を前に移動しました。"]
    assert sentences("## Root cause: the cache is unbounded.") == ["Root cause: the cache is unbounded."]


def test_a_guess_however_worded_falls_with_the_fix_built_on_it():
    turns = _turns(
        ("user", "compaction_keeps_tombstones fails."),
        ("assistant", "I bet the off-by-one is in merge_runs, which skips the last entry."),
        ("assistant", "Nope, same failure, so merge_runs was fine."),
    )
    (attempt,) = find_superseded(turns).attempts
    assert attempt.claims == ["I bet the off-by-one is in merge_runs, which skips the last entry."]


def test_a_users_follow_up_that_says_still_reports_the_fix_broken():
    from daemon.capture.distill.supersede import user_retraction_scope

    for sentence in ("It still runs twice.", "还是执行了两遍，日志如下：", "まだ真っ白です。", "여전히 두 번 실행돼요."):
        assert user_retraction_scope(sentence) == FIXES, sentence
    for sentence in ("Does it still run twice?", "CI is still red, but now it is clippy that fails.", "Add a test too."):
        assert user_retraction_scope(sentence) is None, sentence
    assert retraction_scope("It still runs twice.") is None  # from the agent, "still" alone is a plain statement


def test_a_lead_in_before_a_pasted_log_is_kept_in_a_request():
    from daemon.capture.distill.turns import sentences

    ask = "还是执行了两遍，日志如下：\n```\nINFO Sending due task\n```\n你看一下 k8s 的配置。"
    assert sentences(ask, lead_ins=True) == ["还是执行了两遍，日志如下：", "你看一下 k8s 的配置。"]
    assert sentences(ask) == ["你看一下 k8s 的配置。"]

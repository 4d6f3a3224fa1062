"""A session OpenCode said went idle is distilled at once; the others still settle."""

from __future__ import annotations

from daemon.config import Config, load_settings
from daemon.service.jobs import Jobs
from tests.capture.helpers import add_message, max_time


def test_an_idle_session_skips_the_settle_wait_and_the_others_still_settle(home, fixture_db, fixture_sessions):
    settings, paths = load_settings()
    settings.capture.settle_seconds = 3600
    done = fixture_sessions["cjk-deploy"]["session"]
    busy = fixture_sessions["deploy-pnpm"]["session"]
    now = [max_time(fixture_db) / 1000 + 7200]  # every fixture session is long quiet
    jobs = Jobs(Config(settings, paths), clock=lambda: now[0])
    try:
        jobs.capture(full=True)
        at = int(now[0] * 1000)
        for sid, text in ((done, "部署完成了"), (busy, "still typing")):
            add_message(fixture_db, sid, f"msg_zz{sid[-6:]}", "user", [(f"prt_zz{sid[-6:]}", {"type": "text", "text": text})], at)
        now[0] += 1
        result = jobs.capture()
        assert jobs.state.get(done).status == "settling" and result.recheck_in > 3000
        jobs.capture(idle=frozenset({done}))
        assert jobs.state.get(done).status == "distilled"
        assert "部署完成了" in open(jobs.state.get(done).note_path).read()
        assert jobs.state.get(busy).status == "settling"  # only the idle one skips the wait
    finally:
        jobs.close()

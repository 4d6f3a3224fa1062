"""When the daemon looks again on its own: a retry to come, never one already past."""

from __future__ import annotations

import time

from daemon.config import Config, load_settings
from daemon.service.jobs import Jobs
from daemon.state import SessionRecord


def test_a_retry_is_looked_at_when_due_and_a_vanished_one_does_not_keep_the_daemon_busy(home, fixture_db):
    settings, paths = load_settings()
    settings.capture.settle_seconds = 0
    now = [time.time()]
    jobs = Jobs(Config(settings, paths), clock=lambda: now[0])
    try:
        jobs.capture(full=True)
        at = int(now[0] * 1000)
        # Sessions OpenCode no longer has: one due in ten minutes, one long overdue.
        jobs.state.put(SessionRecord("ses_gone_later", status="retry", retry_at=at + 600_000))
        jobs.state.put(SessionRecord("ses_gone_overdue", status="retry", retry_at=at - 600_000))
        result = jobs.capture()
        assert 590 <= result.recheck_in <= 600  # the one to come, not 1 s for the one past
        jobs.state.put(SessionRecord("ses_gone_later", status="distilled"))
        assert jobs.capture().recheck_in is None  # nothing to come: no timer at all
    finally:
        jobs.close()

"""Longer English sessions: a first fix that does not hold, a continued session whose fix the
user reports broken, a session that ends blocked. Scripted as corpora.py writes them."""

from __future__ import annotations

from tests.capture.corpora import Scenario, text
from tests.capture.corpus_scenarios import SRC, _bash, _edit, _read

INGEST = f"{SRC}/ingest"
POOL_SOURCE = """class Pool:
    async def flush(self):
        async with self._lock:
            await self._queue.join()
    def _refill(self):
        fut = asyncio.run_coroutine_threadsafe(self._fetch(), self._loop)
        return fut.result()
    def close(self):
        raise PoolError("pool closed")"""


def _stress_log(minutes: int, stall_at: int | None) -> str:
    """A long stress-run log: one progress line a tick, a stall and a traceback if it hangs."""
    lines = [f"[stress] tick {n:03d} tasks=200 done={n * 37} ok" for n in range(1, 60 * minutes // 5)]
    if stall_at is None:
        return "\n".join([*lines, "[stress] 200 tasks, 0 stalls in 5m00s"])
    lines = lines[:stall_at] + [
        "[stress] ERROR stall detected: 200 tasks waiting for 30s",
        "Traceback (most recent call last):",
        '  File "scripts/stress.py", line 41, in main',
        "    await asyncio.wait_for(pool.drain(), 30)",
        "asyncio.exceptions.TimeoutError",
        "[stress] 1 failed, 0 passed",
    ]
    return "\n".join(lines)


DEADLOCK = Scenario(
    "en-asyncio-deadlock",
    "Ingest worker deadlock under load",
    INGEST,
    [
        (
            "The ingest worker hangs after a few minutes under load and py-spy shows every task waiting. "
            "Find the deadlock in ingest/pool.py and fix it.",
            [
                [text("Let me read the pool first."), _read(f"{INGEST}/ingest/pool.py", POOL_SOURCE)],
                [_bash("py-spy dump --pid 4121",
                       "Thread 4121 (idle): MainThread\n    acquire (asyncio/locks.py:114)\n    flush (ingest/pool.py:3)")],
                [text("The root cause is that flush() awaits the queue while holding self._lock, so put() can "
                      "never make room.")],
                [_edit(f"{INGEST}/ingest/pool.py", "async with self._lock:\n            await self._queue.join()",
                       "async with self._lock:\n            pending = self._queue\n        await pending.join()")],
                [_bash("pytest tests/test_pool.py -q", "...\n3 passed in 0.41s")],
                [text("Moved the await in flush() out of the lock block; tests/test_pool.py passes.")],
                [_bash("python scripts/stress.py --tasks 200 --minutes 5", _stress_log(5, 24))],
                [text("That didn't hold up: the stress run still stalls after about two minutes, so the lock in "
                      "flush() was not the whole story.")],
                [_bash("py-spy dump --pid 4188 --locals",
                       "Thread 4188 (active): MainThread\n    result (concurrent/futures/_base.py:451)\n"
                       "    _refill (ingest/pool.py:7)\n    put (ingest/pool.py:21)")],
                [text("Found it: _refill() calls run_coroutine_threadsafe(...).result() on the event loop's own "
                      "thread, which blocks the loop while the coroutine waits for that same loop.")],
                [_edit(f"{INGEST}/ingest/pool.py", "fut = asyncio.run_coroutine_threadsafe(self._fetch(), self._loop)\n"
                       "        return fut.result()", "return await self._fetch()")],
                [_bash("python scripts/stress.py --tasks 200 --minutes 5", _stress_log(5, None))],
                [text("The deadlock is gone: _refill() is now a coroutine that awaits self._fetch() instead of "
                      "blocking on .result() inside the loop thread, and python scripts/stress.py --tasks 200 "
                      "--minutes 5 ran with 0 stalls.\n"
                      "Lesson: never block on run_coroutine_threadsafe(...).result() from the event loop's own thread.")],
            ],
        )
    ],
    facts=["ingest/pool.py", "_refill()", "run_coroutine_threadsafe", "python scripts/stress.py --tasks 200 --minutes 5",
           "0 stalls", "stall detected", "awaits self._fetch()"],
    absent=['raise PoolError("pool closed")', "tick 001"],
    superseded=["awaits the queue while holding self._lock", "Moved the await in flush() out of the lock block"],
)

WEB = f"{SRC}/dashboard"
VITEST_FAIL = """ RUN  v1.6.0 /home/dev/src/dashboard

 ❯ src/hooks/usePolling.test.ts (2)
   ✓ polls every interval
   × stops polling when the component unmounts
 ❯ usePolling (2) 1 failed

 FAIL  src/hooks/usePolling.test.ts > stops polling when the component unmounts
AssertionError: expected "spy" to be called 3 times, but got 5 times
 ❯ src/hooks/usePolling.test.ts:31:22

 Test Files  1 failed (1)
      Tests  1 failed | 1 passed (2)"""

POLLING = Scenario(
    "en-react-polling",
    "Dashboard keeps polling after navigation",
    WEB,
    [
        (
            "The dashboard keeps polling /api/stats after I navigate away from the page. Can you fix the usePolling hook?",
            [
                [_read(f"{WEB}/src/hooks/usePolling.ts",
                       "useEffect(() => {\n  const id = setInterval(fetchStats, interval);\n}, [interval]);")],
                [text("The effect starts an interval and never clears it.")],
                [_edit(f"{WEB}/src/hooks/usePolling.ts", "const id = setInterval(fetchStats, interval);\n}",
                       "const id = setInterval(fetchStats, interval);\n  return () => clearInterval(id);\n}")],
                [text("Fixed: usePolling now returns a cleanup that calls clearInterval(id), so polling stops when "
                      "the page unmounts.")],
            ],
        ),
        (
            "Picking this back up. It still polls after navigating away: the network tab shows /api/stats every 5 s "
            "on the settings page, and the unmount test in src/hooks/usePolling.test.ts fails now. Please look "
            "again, and keep the 5 s interval.",
            [
                [_bash("npx vitest run src/hooks/usePolling.test.ts", VITEST_FAIL)],
                [text("The cleanup runs, but fetchStats schedules itself again with setTimeout after every response, "
                      "so a request in flight at unmount restarts the loop.")],
                [text("I'll fix the hook itself rather than the test.")],
                [_edit(f"{WEB}/src/hooks/usePolling.ts", "return () => clearInterval(id);",
                       "const controller = new AbortController();\n  return () => { controller.abort(); "
                       "clearInterval(id); };")],
                [_bash("npx vitest run src/hooks/usePolling.test.ts", " Test Files  1 passed (1)\n      Tests  2 passed (2)")],
                [text("Polling now stops on navigation: usePolling aborts the in-flight request with an "
                      "AbortController on unmount, so fetchStats can no longer reschedule itself, and npx vitest run "
                      "src/hooks/usePolling.test.ts passes (2 tests). The 5 s interval is unchanged.")],
            ],
        ),
    ],
    facts=["src/hooks/usePolling.ts", "AbortController", "npx vitest run src/hooks/usePolling.test.ts",
           "expected \"spy\" to be called 3 times", "keep the 5 s interval", "reschedule itself"],
    absent=["❯ usePolling (2) 1 failed", "I'll fix the hook itself"],
    superseded=["usePolling now returns a cleanup that calls clearInterval(id)"],
)

INFRA = f"{SRC}/infra"
LOCK_ERROR = """Acquiring state lock. This may take a few moments...
╷
│ Error: Error acquiring the state lock
│
│ Error message: ConditionalCheckFailedException: The conditional request failed
│ Lock Info:
│   ID:        7f3c2a91-5d1e-4c2b-9a77-2f0e1c6b8d42
│   Path:      acme-tfstate/prod/network.tfstate
│   Operation: OperationTypeApply
│   Who:       ci@runner-4411
╵"""

TERRAFORM = Scenario(
    "en-terraform-blocked",
    "Apply the VPC peering change",
    INFRA,
    [
        (
            "Apply the VPC peering change in envs/prod/network with terraform apply.",
            [
                [_bash("terraform -chdir=envs/prod/network plan -out=tf.plan", "Plan: 2 to add, 0 to change, 0 to destroy.")],
                [_bash("terraform -chdir=envs/prod/network apply tf.plan", LOCK_ERROR)],
                [text("The apply failed on the state lock: the lock is held by ci@runner-4411, a CI job.")],
                [_bash("terraform -chdir=envs/prod/network force-unlock -force 7f3c2a91-5d1e-4c2b-9a77-2f0e1c6b8d42",
                       "Terraform state has been successfully unlocked!")],
                [text("Released the stale lock with terraform force-unlock, so the apply should go through now.")],
                [_bash("terraform -chdir=envs/prod/network apply tf.plan", LOCK_ERROR.replace("7f3c2a91", "9b1d0e44"))],
                [text("Still blocked: the apply fails again with Error acquiring the state lock because CI run 4411 "
                      "re-took the lock (new ID 9b1d0e44) the moment it was released; the peering change is not "
                      "applied. It needs someone to cancel the CI job before the apply can run; I did not retry "
                      "force-unlock, since that would break the CI run.")],
            ],
        )
    ],
    facts=["Error acquiring the state lock", "envs/prod/network", "ci@runner-4411", "not applied",
           "terraform -chdir=envs/prod/network apply tf.plan"],
    superseded=["the apply should go through now"],
)

ENGLISH = [DEADLOCK, POLLING, TERRAFORM]

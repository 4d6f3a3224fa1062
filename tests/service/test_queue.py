"""The work queue: bursts become one item, the earliest due comes first, close unblocks."""

from __future__ import annotations

import threading

from daemon.service.queue import WorkQueue


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_of_marks_is_one_item_after_the_window():
    clock = FakeClock()
    queue = WorkQueue(clock)
    for step in range(50):  # a burst of WAL writes, 10 ms apart
        clock.now = step * 0.01
        queue.mark("capture", 0.2, trailing=True)
    assert queue.take(timeout=0) is None  # still inside the window
    clock.now = 0.49 + 0.2
    assert queue.take(timeout=0) == "capture"
    assert queue.take(timeout=0) is None  # one wake-up, not fifty


def test_a_burst_that_never_ends_still_closes_its_window_after_the_maximum_delay():
    clock = FakeClock()
    queue = WorkQueue(clock)
    taken = []
    for step in range(300):  # OpenCode writing every 100 ms for 30 s, window 0.2 s
        clock.now = step * 0.1
        queue.mark("capture", 0.2, trailing=True, max_delay=1.0)
        if queue.take(timeout=0) == "capture":
            taken.append(round(clock.now, 1))
    # About one pass a second while the burst lasts: each window opens at the first write
    # after a pass (≤ 0.1 s later) and closes max_delay after it (checked on a 0.1 s step).
    assert len(taken) >= 25 and all(later - earlier < 1.0 + 0.1 + 0.1 + 1e-6 for earlier, later in zip(taken, taken[1:]))


def test_non_trailing_mark_keeps_the_earlier_time():
    clock = FakeClock()
    queue = WorkQueue(clock)
    queue.mark("capture", 1.0)
    queue.mark("capture", 30.0)  # a settle recheck must not postpone a due pass
    assert queue.pending()["capture"] == 1.0


def test_earliest_due_first():
    clock = FakeClock()
    queue = WorkQueue(clock)
    queue.mark("sweep", 5)
    queue.mark("tree:/a", 1)
    queue.mark("capture", 3)
    clock.now = 10
    assert [queue.take(0), queue.take(0), queue.take(0)] == ["tree:/a", "capture", "sweep"]


def test_close_unblocks_a_waiting_worker():
    queue = WorkQueue()
    got = []
    worker = threading.Thread(target=lambda: got.append(queue.take()))
    worker.start()
    queue.close()
    worker.join(2)
    assert not worker.is_alive() and got == [None]

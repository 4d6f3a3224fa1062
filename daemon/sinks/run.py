"""One round of a sink, the same for `memoryd sink push` and the daemon's sink thread:
read the trees into the outbox, then drain it. Also the sink's status as plain data."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from daemon.config import Config, Settings
from daemon.sinks.report import DeliveryReport, Round
from daemon.state import StateDB
from daemon.timefmt import iso


def enabled(settings: Settings) -> bool:
    return bool(settings.sinks.cognee.url)


class Sink:
    """The Cognee sink on one state database connection (one per thread)."""

    def __init__(self, config: Config, state: StateDB) -> None:
        from daemon.sinks.cognee import CogneeClient
        from daemon.sinks.deliver import Deliverer
        from daemon.sinks.fill import Filler
        from daemon.sinks.outbox import Outbox

        self.config, self.state = config, state
        cognee = config.settings.sinks.cognee
        self.outbox = Outbox(state)
        # Reads trees through its own index, with the configured limits.
        self.filler = Filler(self.outbox, cognee.include_memories, max_file_bytes=config.settings.memory.max_file_bytes)
        self.client = CogneeClient(cognee)
        self.deliverer = Deliverer(self.outbox, self.client, cognee)

    def close(self) -> None:
        self.client.close()
        self.filler.close()

    def fill(self, force: bool = False):
        from daemon.memory.roots import known_roots

        # The trees memoryd knows (project trees only with memory.discover_projects).
        return self.filler.fill(known_roots(self.config, self.state), force=force)

    def round(
        self,
        force: bool = False,
        now: bool = False,
        should_stop: Callable[[], bool] = lambda: False,
        progress: Callable[[int, int], None] | None = None,
    ) -> Round:
        """Fill, then deliver what is due (`now`: everything queued, backoff or not)."""
        from daemon.sinks.outbox import delivery_lock

        started = time.monotonic()
        filled = self.fill(force)
        report = DeliveryReport()
        with delivery_lock(self.config.paths.state_dir, blocking=now) as held:
            if held:
                if now:
                    self.outbox.retry_now()
                total = self.outbox.stats()["queued"]
                done = 0

                def step(count: int) -> None:
                    nonlocal done
                    done += count
                    if progress:
                        progress(done, total)

                report = self.deliverer.run(should_stop, step, resend=force)
        return Round(
            **{**asdict(report), "seconds": time.monotonic() - started},
            queued_puts=filled.queued_puts,
            queued_deletes=filled.queued_deletes,
            remaining=self.outbox.stats()["queued"],
        )


def local_status(settings: Settings, state: StateDB) -> dict[str, Any] | None:
    """What the state database says about the sink (no network): for `memoryd status`."""
    if not enabled(settings):
        return None
    from daemon.sinks.outbox import Outbox

    stats = Outbox(state).stats()
    config = settings.sinks.cognee
    return {
        "url": config.url,
        "dataset": config.dataset,
        "cognify": config.cognify,
        "queued": stats["queued"],
        "retrying": stats["retrying"],
        "documents": stats["documents"],
        "delivered_total": stats["delivered_total"],
        "last_delivery": iso(stats["last_delivery_ms"]) if stats["last_delivery_ms"] else None,
        "last_error": stats["last_error"],
        "last_error_at": iso(stats["last_error_ms"]) if stats["last_error_ms"] else None,
        "cognify_run": stats["cognify_run"],
        "cognify_requested": iso(stats["cognify_requested_ms"]) if stats["cognify_requested_ms"] else None,
    }


def format_local(sink: dict[str, Any]) -> list[str]:
    """Lines for `memoryd status`."""
    line = (
        f"Cognee sink: {sink['url']} dataset {sink['dataset']}: {sink['documents']} documents delivered, "
        f"{sink['queued']} queued" + (f" ({sink['retrying']} retrying)" if sink["retrying"] else "")
        + f"; last delivery {sink['last_delivery'] or 'never'}"
    )
    lines = [line]
    if sink["last_error"]:
        lines.append(f"  last error ({sink['last_error_at']}): {sink['last_error'][:200]}")
    if sink["cognify_run"]:
        lines.append(f"  cognify requested {sink['cognify_requested']} (run {sink['cognify_run']})")
    return lines

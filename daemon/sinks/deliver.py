"""Drain the outbox into Cognee: deletes, replacements, then adds in batches; cognify.

A rewritten note replaces its document: the data id recorded at its last delivery is
deleted, then the new text added (Cognee's update endpoint re-runs the model pipeline
inline, which can take minutes; its add never replaces a document by itself). Deleting
is idempotent on the server, so a crash between the two only repeats the delete.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from daemon.config import CogneeSinkSettings
from daemon.logs import get_logger
from daemon.sinks.cognee import CogneeClient, SinkError, Upload
from daemon.sinks.outbox import DELETE, Entry, Outbox
from daemon.sinks.report import DeliveryReport

log = get_logger("memoryd.sinks")


class Deliverer:
    """Sends due outbox entries to one Cognee server."""

    def __init__(self, outbox: Outbox, client: CogneeClient, settings: CogneeSinkSettings) -> None:
        self.outbox = outbox
        self.client = client
        self.settings = settings

    def run(
        self,
        should_stop: Callable[[], bool] = lambda: False,
        progress: Callable[[int], None] | None = None,
        cognify: bool | None = None,
        resend: bool = False,
    ) -> DeliveryReport:
        """Deliver until the outbox has nothing due or a request fails (then it backs off).

        `resend`: add documents the server should already hold too (it may have lost them;
        identical content is a no-op there)."""
        started = time.monotonic()
        report = DeliveryReport()
        while not should_stop():
            batch = self.outbox.due(self.settings.batch_size)
            if not batch:
                break
            try:
                self._batch(batch, report, resend)
            except SinkError as exc:
                report.error = str(exc)
                self.outbox.failed(batch, str(exc), self.settings.max_backoff_s)
                log.warning("sink.failed", sink="cognee", error=str(exc), entries=len(batch), retryable=exc.retryable)
                break
            if progress:
                progress(len(batch))
        wants_cognify = self.settings.cognify == "batch" if cognify is None else cognify
        if wants_cognify and report.added + report.replaced + report.resent and not report.error:
            self.request_cognify(report)
        report.seconds = time.monotonic() - started
        if report.sent or report.error:
            log.info("sink.delivered", sink="cognee", added=report.added, replaced=report.replaced,
                     deleted=report.deleted, unchanged=report.unchanged, seconds=round(report.seconds, 3))
        return report

    def _batch(self, batch: list[Entry], report: DeliveryReport, resend: bool) -> None:
        delivered = self.outbox.delivered_map([e.doc_key for e in batch])
        uploads: list[Entry] = []
        counts = {"added": 0, "replaced": 0, "resent": 0}  # reported once the server confirmed
        for entry in batch:
            done = delivered.get(entry.doc_key)
            if entry.op == DELETE:
                if done is not None:
                    self.client.delete(done.dataset_id, done.remote_id)
                self.outbox.confirm_delete(entry)
                report.deleted += 1
            elif done is not None and done.content_hash == entry.content_hash and not resend:
                self.outbox.confirm_unchanged(entry)  # at-least-once: sent before, confirmed now
                report.unchanged += 1
            elif done is not None and done.content_hash == entry.content_hash:
                counts["resent"] += 1
                uploads.append(entry)
            else:
                if done is not None:
                    self.client.delete(done.dataset_id, done.remote_id)  # the earlier version goes first
                counts["replaced" if done is not None else "added"] += 1
                uploads.append(entry)
        if uploads:
            dataset_id, ids = self.client.add([Upload(e.filename, e.content, e.metadata or {}) for e in uploads])
            self.outbox.confirm_puts(uploads, dataset_id, ids)
        report.added += counts["added"]
        report.replaced += counts["replaced"]
        report.resent += counts["resent"]

    def request_cognify(self, report: DeliveryReport | None = None) -> str:
        """Ask for a background cognify; a failure is recorded, the documents stay delivered."""
        state = self.outbox.state
        try:
            run = self.client.cognify()
        except SinkError as exc:
            state.set_meta("sink.cognee.last_error", f"cognify: {exc}")
            log.warning("sink.cognify_failed", error=str(exc))
            return ""
        state.set_meta("sink.cognee.cognify_run", run)
        state.set_meta("sink.cognee.cognify_at", str(int(time.time() * 1000)))
        log.info("sink.cognify_requested", run=run, dataset=self.client.dataset)
        if report is not None:
            report.cognify_run = run
        return run

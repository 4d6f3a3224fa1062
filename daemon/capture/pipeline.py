"""Capture: the long-lived handles a capture pass works with, and how to open them.

`daemon.capture.plan` decides (from data alone), `daemon.capture.run` acts; a `Capture`
only holds what outlives a pass: the OpenCode reader, the state database, the
distiller and the clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from daemon.capture.distill.base import Distiller
from daemon.capture.lessons import NoteMemories
from daemon.capture.plan import Action, Identity, PassOptions, PassReport, is_stale, needs_distiller, plan_session
from daemon.capture.rejudge import stale_junk_ids
from daemon.capture.run import Progress, run_pass
from daemon.capture.transcript import Limits
from daemon.config import Config
from daemon.logs import get_logger
from daemon.opencode.reader import OpenCodeReader, SessionInfo
from daemon.state import StateDB, WriteFence

__all__ = [
    "Action",
    "Capture",
    "Identity",
    "PassOptions",
    "PassReport",
    "close_capture",
    "is_stale",
    "needs_distiller",
    "open_capture",
    "plan_session",
]


class Capture:
    """Runs capture passes against one OpenCode database and one state database."""

    def __init__(
        self,
        config: Config,
        reader: OpenCodeReader,
        state: StateDB,
        distiller: Distiller,
        identity: Identity = Identity(),
        fallback: Distiller | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings, self.paths = config.settings, config.paths
        self.reader = reader
        self.state = state
        self.distiller = distiller
        self.identity = identity
        self.fallback = fallback  # used when the model's budget is spent (llm.fallback)
        self.clock = clock
        self.log = get_logger("memoryd.capture")
        self.limits = Limits.from_settings(config.settings.capture)
        self.should_stop: Callable[[], bool] = lambda: False  # the daemon sets this on shutdown
        self.calls = 0  # distiller calls this process made (tests and the benchmark read it)
        self.memories = NoteMemories(config)  # a note's lessons, gotchas, decisions

    def run_pass(self, options: PassOptions = PassOptions(), progress: Progress | None = None) -> PassReport:
        """Run one pass; return what happened (see daemon.capture.run.run_pass)."""
        return run_pass(self, options, progress)

    def cancel(self) -> None:
        """Cancel model requests in flight (daemon shutdown): close the distiller's HTTP client."""
        cancel = getattr(self.distiller, "cancel", None)  # only model distillers have requests in flight
        if cancel is not None:
            cancel()

    def candidates(
        self, options: PassOptions, held: bool = True, now_ms: int | None = None
    ) -> tuple[list[SessionInfo], bool]:
        """Return root sessions to consider, oldest first, and whether the pass is complete.

        `held`: also revisit sessions a stop left (no stop is in force); `now_ms`: only
        retries due by then (None: all of them).
        """
        full_scope = options.session_id is None and options.limit is None and not options.offset
        watermark = self.state.watermark
        if options.session_id is not None:
            infos = self.reader.sessions([options.session_id])
            if not infos:
                raise LookupError(f"no session {options.session_id!r} in {self.reader.path}")
        elif options.force or options.full_scan or watermark == 0 or not full_scope:
            infos = self.reader.sessions()
        else:
            ids = self.reader.changed_since(self.state.get_meta("source_cursor"))
            upgrades = self.identity.distiller != "extractive" and held
            ids |= set(self.state.ids_to_revisit(upgrades=upgrades, held=held, now_ms=now_ms))
            ids |= options.idle
            ids |= stale_junk_ids(self.state, (self.identity.distiller, self.identity.prompt_version))
            if options.redistill_stale:
                ids |= {r.session_id for r in self.state.records("distilled") if is_stale(r, self.identity)}
            infos = self.reader.sessions(sorted(ids))
        # Subagent sessions are part of their parent's note: a moved child moves its parent.
        roots = {i.id: i for i in infos if not i.parent_id}
        parents = sorted({i.parent_id for i in infos if i.parent_id and i.parent_id not in roots})
        for parent in self.reader.sessions(parents) if parents else []:
            if not parent.parent_id:
                roots[parent.id] = parent
        ordered = sorted(roots.values(), key=lambda s: (s.time_created, s.id))
        if options.offset:
            ordered = ordered[options.offset :]
        if options.limit is not None:
            ordered = ordered[: options.limit]
        return ordered, full_scope


def open_capture(
    config: Config, clock: Callable[[], float] = time.time, fence: WriteFence | None = None
) -> Capture:
    """Open the source, the state database and the configured distiller.

    `fence`: the daemon's, closed on shutdown so that nothing is written after it.
    """
    from daemon.capture.distill.extractive import ExtractiveDistiller

    settings, paths = config.settings, config.paths
    reader = OpenCodeReader(paths.opencode_db, settings.source.busy_timeout_ms)
    try:
        state, rebuilt = StateDB.open_or_rebuild(paths.state_db, fence=fence)
    except BaseException:
        reader.close()
        raise
    if rebuilt:
        get_logger("memoryd.capture").warning("state.rebuilt", detail=rebuilt)
    if settings.llm.provider == "extractive":
        return Capture(config, reader, state, ExtractiveDistiller(), clock=clock)
    from daemon.capture.distill import factory

    try:
        distiller, identity = factory.open_model_distiller(settings.llm, state, clock)
    except BaseException:  # ConfigError (no model name): close what was opened
        reader.close()
        state.close()
        raise
    fallback = ExtractiveDistiller() if settings.llm.fallback == "extractive" else None
    return Capture(config, reader, state, distiller, Identity(*identity), fallback, clock)


def close_capture(capture: Capture) -> None:
    capture.distiller.close()
    capture.reader.close()
    capture.state.close()

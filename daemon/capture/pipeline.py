"""Capture: open a `Capturer` from the configuration.

`daemon.capture.plan` decides (from data alone), `daemon.capture.run` holds the
`Capturer`, which owns the sources (every agent's, `daemon.capture.sources`), the state database and the distiller and
carries out a pass.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from daemon.capture.lifecycle import Identity, ServerFaults, is_stale
from daemon.capture.plan import PassOptions, PassReport
from daemon.capture.run import Capturer
from daemon.capture.treewrite import OwnWrites, TreeWriter
from daemon.config import Config
from daemon.logs import get_logger
from daemon.capture.sources import open_sources
from daemon.state import StateDB, WriteFence

__all__ = ["Capturer", "Identity", "PassOptions", "PassReport", "is_stale", "open_capturer"]


def open_capturer(
    config: Config,
    clock: Callable[[], float] = time.time,
    fence: WriteFence | None = None,
    own_writes: OwnWrites | None = None,
) -> Capturer:
    """Open the source, the state database and the configured distiller.

    `fence`: the daemon's, closed on shutdown so that nothing is written after it;
    `own_writes`: where the notes written are remembered, for the daemon's watcher.
    """
    from daemon.capture.distill.extractive import ExtractiveDistiller

    settings, paths = config.settings, config.paths
    reader = open_sources(config)
    try:
        state, rebuilt = StateDB.open_or_rebuild(paths.state_db, fence=fence)
    except BaseException:
        reader.close()
        raise
    if rebuilt:
        get_logger("memoryd.capture").warning("state.rebuilt", detail=rebuilt)
    _remove_stale_temps(config, state)
    writer = TreeWriter(state.fence, own_writes)
    faults = ServerFaults()
    if settings.llm.provider == "extractive":
        return Capturer(config, reader, state, ExtractiveDistiller(), clock=clock, writer=writer)
    from daemon.capture.distill import factory

    try:
        distiller, identity = factory.open_model_distiller(settings.llm, state, clock, faults=faults)
    except BaseException:  # ConfigError (no model name): close what was opened
        reader.close()
        state.close()
        raise
    fallback = ExtractiveDistiller() if settings.llm.fallback == "extractive" else None
    return Capturer(config, reader, state, distiller, Identity(*identity), fallback, clock, writer, faults)


def _remove_stale_temps(config: Config, state: StateDB) -> None:
    """Temp files a killed run left (a process pool's workers end without cleaning up):
    removed where memoryd writes, the state folder and every tree's folders."""
    import os

    from daemon.files import remove_stale_temps
    from daemon.memory.roots import known_roots

    folders = [config.paths.state_dir, config.paths.transcripts_dir]
    for root in known_roots(config, state):
        folders.append(root.path)
        for base in (root.path, root.expired_dir):
            try:
                with os.scandir(base) as listing:
                    folders.extend(Path(e.path) for e in listing if e.is_dir(follow_symlinks=False))
            except OSError:
                continue  # no such folder (no .expired yet): nothing left there
    gone = remove_stale_temps(folders)
    if gone:
        get_logger("memoryd.capture").info("temp.removed", count=len(gone), first=str(gone[0]))

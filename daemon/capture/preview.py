"""The notes a pass would write, rendered but not written (`memoryd distill --dry-run --show`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from daemon.capture.distill.base import DistillError
from daemon.capture.notes import render_note
from daemon.capture.transcript import build_transcript

if TYPE_CHECKING:
    from daemon.capture.run import Capturer


def preview_notes(capturer: Capturer, session_ids: Iterable[str]) -> Iterator[tuple[str, str]]:
    """(session id, the note it would get, or why it would get none), in order.

    Nothing is written. With a model configured this calls it, as a real pass would.
    """
    reader, distiller, limits = capturer.reader, capturer.distiller, capturer.limits
    for info in reader.sessions(list(session_ids)):
        transcript = build_transcript(reader.session_rows(info), limits)
        try:
            result = distiller.distill(transcript)
        except DistillError as exc:
            yield info.id, f"(no note: {exc})"
            continue
        yield info.id, "(junk: no note)" if result.junk else render_note(transcript.session, result, info.time_updated)

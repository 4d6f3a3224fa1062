"""Junk verdicts are judged again when the distiller or its prompt version changes."""

from __future__ import annotations

from daemon.capture.distill.base import Distilled
from daemon.capture.distill.extractive import ExtractiveDistiller
from daemon.capture.pipeline import Capturer, Identity, PassOptions
from daemon.config import Config, load_settings
from daemon.opencode.reader import OpenCodeReader
from daemon.state import StateDB

NOW = 1796040000.0  # after every fixture row


class Versioned(ExtractiveDistiller):
    """The extractive rules, reporting themselves as a model with a prompt version; counts calls."""

    def __init__(self, version: str) -> None:
        self.name = "openai:scripted"
        self.version = version
        self.calls: list[str] = []

    def distill(self, transcript):
        self.calls.append(transcript.session.id)
        result = super().distill(transcript)
        return Distilled(junk=result.junk, body=result.body, summary=result.summary, distiller=self.name,
                         prompt_version=self.version)


def capture_with(version: str) -> Capturer:
    settings, paths = load_settings()
    reader = OpenCodeReader(paths.opencode_db)
    return Capturer(Config(settings, paths), reader, StateDB(paths.state_db), Versioned(version),
                   Identity("openai:scripted", version), clock=lambda: NOW)


def close(capture: Capturer) -> None:
    capture.reader.close()
    capture.state.close()


def test_a_new_prompt_version_judges_junk_again_and_only_junk(home, fixture_db, fixture_sessions):
    junk = fixture_sessions["junk-hello"]["session"]
    first = capture_with("v1")
    assert first.run_pass().junk == [junk]
    assert not first.run_pass().junk  # same version: the verdict stands, no call
    close(first)

    second = capture_with("v2")
    report = second.run_pass()  # an incremental pass: nothing in the source moved
    assert second.distiller.calls == [junk]  # only the junk verdict is redone, not the notes
    assert report.junk == [junk]
    record = second.state.get(junk)
    assert (record.status, record.prompt_version) == ("junk", "v2")
    again = second.run_pass(PassOptions())
    assert second.distiller.calls == [junk] and not again.junk
    close(second)

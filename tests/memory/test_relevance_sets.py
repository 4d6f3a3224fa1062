"""The labelled training worlds (tests/data/relevance/training/) scored as bench_relevance
scores them, at their own size, with floors a little under what the ranking reaches: a
change that makes previews worse on prompts already seen fails here. These sets have been
read and tuned on, so they guard against regressions; they say nothing about prompts
nobody has seen (that is the validation set's job, outside the repository)."""

from __future__ import annotations

import json

import pytest

from bench.bench_relevance import DATA, BadSet, Tally, load, run_world, worlds_in

FLOORS = {"precision": 0.92, "recall": 0.92, "cjk precision": 0.92, "cjk recall": 0.93, "nothing relevant with a section": 0.09}


@pytest.fixture(scope="module")
def training() -> Tally:
    total = Tally()
    for path in worlds_in(DATA / "training"):
        total.add(run_world(load(path), 0, verbose=False))
    return total


def test_the_training_worlds_keep_their_floors(training: Tally) -> None:
    reached = {
        "precision": training.precision(),
        "recall": training.recall(),
        "cjk precision": training.precision("cjk"),
        "cjk recall": training.recall("cjk"),
    }
    assert training.prompts >= 600 and training.empty_prompts >= 150
    for name, value in reached.items():
        assert value >= FLOORS[name], f"{name} {value:.3f} under its floor {FLOORS[name]}"
    share = training.empty_with_section / training.empty_prompts
    assert share <= FLOORS["nothing relevant with a section"], f"{training.empty_with_section}/{training.empty_prompts} nothing-relevant prompts got a section"


def test_no_block_or_recall_shows_another_projects_memory(training: Tally) -> None:
    assert training.cross == 0 and training.recall_cross == 0


def test_a_set_that_breaks_the_format_is_named_with_what_is_wrong(tmp_path) -> None:
    world = {"name": "w", "projects": [{"name": "a"}, {"name": "b"}],
             "memories": [{"id": "b1", "project": "b", "kind": "lesson", "title": "t", "body": "x"}],
             "prompts": [{"project": "a", "prompt": "about b's lesson", "should": ["b1"]}]}  # fmt: skip
    path = tmp_path / "w.json"
    path.write_text(json.dumps(world), encoding="utf-8")
    with pytest.raises(BadSet, match=r"w\.json.*not memories in its scope"):
        load(path)
    world["memories"][0]["kind"] = "note"
    path.write_text(json.dumps(world), encoding="utf-8")
    with pytest.raises(BadSet, match="kind must be one of"):
        load(path)

"""Smoke test for the OpenCode 2.0 harness: real 2.0.15, scripted model, real database."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.fake_model import ScriptedModel
from tests.e2e.opencode import make_worktree
from tests.e2e.opencode2 import OPENCODE2_VERSION, OpenCode2Home, require_opencode2, v2_scenario
from tests.e2e.test_opencode_harness import load_scenario

pytestmark = pytest.mark.e2e


def test_deploy_pnpm_session_then_followup_on_opencode2(tmp_path: Path) -> None:
    binary = require_opencode2()
    scenario = v2_scenario(load_scenario("deploy-pnpm"))
    root = tmp_path / "src"
    worktree = make_worktree(root / scenario["project"], scenario["files"]).resolve()
    deploy = worktree / "scripts" / "deploy.sh"

    with ScriptedModel() as model:
        model.add_scenario(scenario, root.resolve())
        home = OpenCode2Home(tmp_path / "home", model.url, binary=binary)

        sid = home.run(scenario["prompt"], worktree)
        row = home.session(sid)
        assert row["parent_id"] is None and row["directory"] == str(worktree)
        assert row["version"] == OPENCODE2_VERSION and row["title"] == scenario["title"]
        types = [m["type"] for m in home.messages(sid)]
        assert types == ["user", "assistant", "assistant", "assistant", "assistant", "idle"], types
        tools = {p["data"]["name"]: p["data"]["state"]["status"] for p in home.parts(sid) if p["data"]["type"] == "tool"}
        assert tools == {"read": "completed", "edit": "completed", "shell": "completed"}
        assert "pnpm install --frozen-lockfile" in deploy.read_text()

        same = home.run(scenario["followups"][0]["prompt"], worktree, session=sid)
        assert same == sid and "prod:/srv/webapp" in deploy.read_text()
        assert [s["id"] for s in home.sessions()] == [sid]
        assert [m["type"] for m in home.messages(sid)].count("idle") == 2
    assert not model.errors, model.errors

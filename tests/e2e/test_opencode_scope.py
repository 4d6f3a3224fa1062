"""End to end: two projects share the global tree; neither sees the other's memories.

Real OpenCode 1.18.33 and a scripted model. Neither project has a `.memory/`, so both
projects' notes (and the decision extracted from one) go to the global tree, as they do
by default. Every block a session of project A is given is checked: nothing of project B
in its inventory or its previews, no "Relevant" section when nothing is about the prompt,
the hard rule once.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import frontmatter
import pytest

from tests.e2e.fake_model import ScriptedModel
from tests.e2e.opencode import OpenCodeHome, make_worktree, require_opencode
from tests.e2e.test_opencode_harness import load_scenario
from tests.e2e.test_opencode_inject import BLOCK, system_messages

pytestmark = pytest.mark.e2e

RULE = "Never push to main directly"
B_PROMPT = "The VAT totals in src/vat.rs round wrong on large invoices. Fix the sum."
B_DECISION = "money is rust_decimal Decimal in the invoice VAT sum, never f64"
A_ABOUT_B = "Why are the VAT invoice totals rounding wrong with f64 in the Decimal sum?"
A_NOTHING = "Write a short haiku about autumn leaves"


@dataclass
class Two:
    base: Path
    model: ScriptedModel
    home: OpenCodeHome
    a: Path
    b: Path
    env: dict[str, str]

    def memoryd(self, *args: str, cwd: Path) -> str:
        result = subprocess.run([sys.executable, "-m", "daemon", *args], env=self.env, cwd=cwd, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        return result.stdout

    def blocks_since(self, start: int) -> list[str]:
        """The memory block of every agent request since `start`."""
        found = []
        for request in self.model.requests[start:]:
            if request.get("tools"):
                for system in system_messages(request):
                    found.extend(BLOCK.findall(system))
        assert found, "no agent request carried a memory block"
        return found


@pytest.fixture
def two() -> Iterator[Two]:
    binary = require_opencode()
    base = Path(tempfile.mkdtemp(prefix="mds-")).resolve()
    scenario = load_scenario("deploy-pnpm")
    a = make_worktree(base / "src" / scenario["project"], scenario["files"]).resolve()
    b = make_worktree(base / "src" / "billing", {"src/vat.rs": "pub fn vat(x: f64) -> f64 { x * 0.2 }\n"}).resolve()
    try:
        with ScriptedModel() as model:
            model.add_scenario(scenario, base / "src")
            model.add_session(B_PROMPT, [
                {"text": "Reading the VAT code.", "tools": [{"name": "read", "args": {"filePath": str(b / "src" / "vat.rs")}}]},
                {"text": f"Found it: f64 rounding in the VAT sum. Decision: {B_DECISION}, so invoices round once."},
            ], "VAT rounding on large invoices")  # fmt: skip
            for key in (A_ABOUT_B, A_NOTHING):
                model.add_session(key, [{"text": "Noted."}], "A question")
            home = OpenCodeHome(base / "h", model.url, binary=binary)
            keep = ("MEMORYD_", "XDG_", "OPENCODE", "NOTIFY_SOCKET")
            env = {**{k: v for k, v in os.environ.items() if not k.startswith(keep)}, **home.env}
            env["MEMORYD_CAPTURE__SETTLE_SECONDS"] = "0"
            world = Two(base, model, home, a, b, env)
            world.memoryd("remember", "--global", "--hard-rule", "-k", "rule", "-t", RULE, "Open a pull request.", cwd=a)
            world.memoryd("opencode", "install", cwd=a)
            yield world
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_project_a_never_sees_project_bs_notes_or_memories(two: Two) -> None:
    b_session = two.home.run(B_PROMPT, two.b)
    two.memoryd("distill", cwd=two.b)
    global_root = two.home.config / "opencode" / "memory"
    (note,) = [p for p in (global_root / "sessions").glob("*.md") if p.name != "index.md"]
    (decision,) = [p for p in (global_root / "decision").glob("*.md") if p.name != "index.md"]
    assert frontmatter.load(note)["project"] == str(two.b)
    assert frontmatter.load(decision)["project"] == str(two.b)
    b_marks = [b_session, str(two.b), frontmatter.load(note)["title"], "Decimal", "f64", frontmatter.load(decision)["id"]]

    # Project B's own next session is given its decision: the check below can fail.
    start = len(two.model.requests)
    two.home.run(A_ABOUT_B, two.b)
    (b_block, *_) = two.blocks_since(start)
    assert frontmatter.load(decision)["id"] in b_block and "## Relevant to the first prompt" in b_block

    for prompt in (A_ABOUT_B, A_NOTHING, load_scenario("deploy-pnpm")["prompt"]):
        start = len(two.model.requests)
        two.home.run(prompt, two.a)
        for block in two.blocks_since(start):
            leaked = [mark for mark in b_marks if mark in block]
            assert not leaked, f"project B's {leaked} in project A's block for {prompt!r}:\n{block}"
            assert "## Relevant to the first prompt" not in block, f"previews for {prompt!r}:\n{block}"
            assert block.count(RULE) == 1

"""remember refuses every credential of the catalogue, wherever it is put (title, kind, tags,
body), writes nothing, and says so without repeating the secret."""

from __future__ import annotations

import pytest

from daemon.memory import commands
from daemon.memory.workspace import SecretRefused, Workspace
from tests.secrets_catalogue import CATALOGUE


@pytest.mark.parametrize("case", CATALOGUE, ids=[f"{c.format}-{i}" for i, c in enumerate(CATALOGUE)])
def test_remember_refuses_the_credential_in_a_body_and_does_not_echo_it(ws: Workspace, case):
    with pytest.raises(SecretRefused) as caught:
        commands.remember(ws, kind="reference", title="Deploy notes", body=f"Notes.\n{case.text}\n")
    message = str(caught.value)
    assert not any(value in message for value in case.values)
    assert "body" in message and not [p for root in (ws.project, ws.global_root) if root for p in root.path.rglob("*.md")]


@pytest.mark.parametrize("field", ["title", "kind", "tags"])
def test_remember_refuses_a_credential_in_any_field(ws: Workspace, field):
    token = next(c for c in CATALOGUE if c.kind == "github_token").values[0]
    args = {"kind": "reference", "title": "Deploy notes", "body": "Use the deploy key from the vault.", "tags": ["ops"]}
    args[field] = [f"ops {token}"] if field == "tags" else f"x {token}"
    with pytest.raises(SecretRefused) as caught:
        commands.remember(ws, **args)
    assert token not in str(caught.value) and field in str(caught.value)


def test_remember_keeps_ordinary_code(ws: Workspace):
    body = "Use `token = tokens[i]`, `pwd = os.getcwd()` and `api_key=api_key`; `password: str` in the model."
    result = commands.remember(ws, kind="reference", title="Parser idioms", body=body)
    assert result.memory.path.read_text().count("[REDACTED") == 0 and "tokens[i]" in result.memory.path.read_text()


def _fresh_cases() -> list[dict]:
    """One planted case per family and place of the read fresh batches (tests/fixtures/secrets-fresh)."""
    import json
    from pathlib import Path

    seen, out = set(), []
    for path in sorted((Path(__file__).parent.parent / "fixtures" / "secrets-fresh").glob("batch-?.json")):
        for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
            if (case["family"], case["place"]) not in seen:
                seen.add((case["family"], case["place"]))
                out.append(case)
    return out


@pytest.mark.parametrize("case", _fresh_cases(), ids=lambda c: f"{c['family']}-{c['place']}-{c['lang']}")
def test_remember_refuses_a_credential_found_by_its_place_and_does_not_echo_it(ws: Workspace, case):
    with pytest.raises(SecretRefused) as caught:
        commands.remember(ws, kind="reference", title="Deploy notes", body=f"Notes.\n{case['text']}\n")
    assert case["secret"] not in str(caught.value)

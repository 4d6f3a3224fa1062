"""A tree the user cannot write: `memoryd remember` names the tree, not a temp file."""

from __future__ import annotations

from tests.other_user import other_user  # noqa: F401 - a fixture

TEMP = ".memoryd-tmp-"


def test_remember_into_a_read_only_tree_names_the_tree(other_user):  # noqa: F811
    project = other_user.home / "shop"
    (project / ".git").mkdir(parents=True)
    tree = project / ".memory"
    facts = tree / "fact"
    facts.mkdir(parents=True)
    other_user.own(other_user.home)
    for folder in (facts, tree):  # the user's own tree, made read-only (a checkout mounted read-only, say)
        folder.chmod(0o555)
    done = other_user.memoryd("remember", "-k", "fact", "-t", "Deploys", "Deploys go through CI.", cwd=project)
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert str(facts) in output and TEMP not in output, output
    assert "Traceback" not in output
    assert sorted(p.name for p in facts.iterdir()) == []

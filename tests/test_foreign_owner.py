"""A state folder another user owns (one `sudo -E memoryd distill` leaves it root's):
every command says so in one line, with the path and the chown to run; no traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import OPENCODE_FIXTURE
from tests.other_user import other_user  # noqa: F401 - a fixture

COMMANDS = [("status",), ("distill", "--settle", "0"), ("remember", "--global", "-k", "fact", "-t", "Deploys", "Through CI."),
            ("run",)]


def as_root_with_their_home(user, *args: str) -> None:
    """`sudo -E memoryd ARGS`: root, with the user's environment (their HOME)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "MEMORYD_"))} | user.env()
    done = subprocess.run([sys.executable, "-m", "daemon", *args], env=env, cwd=user.home, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("before", ["fresh", "used"])
def test_every_command_names_the_foreign_state_folder_and_the_chown(other_user, before):  # noqa: F811
    db = other_user.home / ".local/share/opencode/opencode.db"
    db.parent.mkdir(parents=True)
    shutil.copy(OPENCODE_FIXTURE / "opencode.db", db)
    other_user.own(other_user.home)
    state = other_user.home / ".local/state/memoryd"
    if before == "used":  # the user's own folder, then root's files in it
        assert other_user.memoryd("status").returncode == 0
    as_root_with_their_home(other_user, "distill", "--settle", "0")
    assert os.stat(state / "state.db").st_uid == 0
    advice = set()
    for command in COMMANDS:
        done = other_user.memoryd(*command)
        output = done.stdout + done.stderr
        assert done.returncode == 1, (command, output)
        assert "Traceback" not in output and "PermissionError" not in output, (command, output)
        assert len(output.strip().splitlines()) == 1, (command, output)
        assert f"sudo chown -R {other_user.user.pw_name}: " in output and str(state.parent) in output
        advice.add(output.strip().partition("Give them back with: ")[2] or output.partition("back with: ")[2])
    assert len(advice) == 1  # the same folders, the same command, whatever the command
    subprocess.run(["sh", "-c", advice.pop().removeprefix("sudo ")], check=True)  # as told
    for command in COMMANDS[:3]:
        done = other_user.memoryd(*command)
        assert done.returncode == 0, (command, done.stdout + done.stderr)

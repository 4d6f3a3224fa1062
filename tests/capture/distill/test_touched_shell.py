"""Files written by shell redirection, read with the shell's own quoting rules."""

from __future__ import annotations

import pytest

from daemon.capture.distill.base import Entry
from daemon.capture.distill.touched import Touched, redirect_targets

CASES = [
    ('psql -c "SELECT email FROM users GROUP BY email HAVING count(*) > 1" > dups.txt 2>&1', ["dups.txt"]),
    ("psql \"$DATABASE_URL\" -c 'SELECT 1 WHERE 2 > 1'", []),
    ("echo FOO=1 >> .env", [".env"]),
    ("cat > scripts/new.py <<EOF\nif a > b:\n    print(a >> 2)\nEOF\necho done > status.txt", ["scripts/new.py", "status.txt"]),
    ("cat <<'SQL' > db/fix.sql\nSELECT * FROM t WHERE n > 0;\nSQL", ["db/fix.sql"]),
    ("make -j2 2>&1 | tee build.log", ["build.log"]),
    ("pytest | tee -a out/a.log out/b.log > /dev/null", ["/dev/null", "out/a.log", "out/b.log"]),
    ("pytest -q &> out.log", ["out.log"]),
    ("echo 'a > b'", []),
    ("ls>list.txt", ["list.txt"]),
    ("echo 'unclosed > quote", []),
]


@pytest.mark.parametrize(("command", "targets"), CASES, ids=[c[0][:30] for c in CASES])
def test_redirect_targets_respect_quotes_and_here_documents(command, targets):
    assert redirect_targets(command) == targets


def test_a_quoted_comparison_in_a_psql_command_lists_no_file():
    touched = Touched("/home/dev/src/shop")
    command = "psql -d shop -c \"SELECT email, count(*) FROM users GROUP BY email HAVING count(*) > 1;\""
    touched.add_tool(Entry("assistant", "tool", tool="bash", input={"command": command}))
    assert touched.lines() == [f"`{command}`"]

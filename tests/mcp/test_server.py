"""`memoryd mcp` over stdio, driven by the MCP SDK's client as OpenCode would drive it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from daemon.cli.main import cli
from tests.mcp.helpers import Session, field, make_git_worktree, memory_files, serve
from tests.secrets_catalogue import CATALOGUE

TOOLS = {"recall", "remember", "forget", "inspect", "list_memories"}
SECRET = "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx1234"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_git_worktree(tmp_path / "src" / "app")


# --- discovery --------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "auto"])  # legacy: the initialize handshake OpenCode uses
def test_tools_have_schemas_descriptions_and_instructions(home, project, mode):
    async def scenario(s: Session):
        tools = {tool.name: tool for tool in (await s.client.list_tools()).tools}
        return tools, s.client.instructions, s.client.server_info

    tools, instructions, info = serve(home, project, scenario, mode=mode)
    assert set(tools) == TOOLS
    assert info is not None and info.name == "memoryd"
    schemas = {name: tool.input_schema for name, tool in tools.items()}
    assert schemas["recall"]["required"] == ["query"]
    assert schemas["recall"]["properties"]["scope"]["enum"] == ["all", "project", "global", "everywhere"]
    assert schemas["recall"]["properties"]["limit"]["type"] == "integer"
    assert sorted(schemas["remember"]["required"]) == ["body", "kind", "title"]
    assert schemas["remember"]["properties"]["scope"]["enum"] == ["project", "global"]
    assert set(schemas["remember"]["properties"]) == {"kind", "title", "body", "tags", "expires", "scope"}
    assert set(schemas["forget"]["properties"]) == {"id", "query"} and not schemas["forget"].get("required")
    assert set(schemas["list_memories"]["properties"]) == {"kind", "limit", "scope"}
    for name, tool in tools.items():
        assert tool.description and len(tool.description) < 400, name
        assert all(p.get("description") for p in tool.input_schema["properties"].values()), name
    assert tools["recall"].annotations.read_only_hint is True
    assert tools["forget"].annotations.destructive_hint is True
    # The model is told when to use memory, and what never to put in it.
    assert "start of a task" in instructions and "recall" in instructions
    assert "remember" in instructions and "credentials" in instructions
    assert str(project) in instructions


# --- remember, recall, inspect, list --------------------------------------------------------


def test_remember_recall_and_inspect(home, project):
    body = "SQLite runs in WAL mode so concurrent sessions do not queue.\n\n" + "Details. " * 120

    async def scenario(s: Session):
        saved = await s.ok("remember", kind="decision", title="Use WAL mode", body=body, tags=["db", "sqlite"])
        found = await s.ok("recall", query="concurrent sessions")
        memory_id = field(saved, "id")
        whole = await s.ok("inspect", id=memory_id)
        inventory = await s.ok("inspect")
        listing = await s.ok("list_memories")
        return saved, found, memory_id, whole, inventory, listing

    saved, found, memory_id, whole, inventory, listing = serve(home, project, scenario)
    path = project / ".memory" / "decision" / "use-wal-mode.md"
    assert path.exists() and memory_files(project / ".memory") == [path]
    assert saved.startswith("Saved decision 'Use WAL mode' (project, id ") and str(path) in saved
    # Compact results: title, kind, scope, date, id, path, tags and a bounded preview, no full body.
    assert "1. Use WAL mode  (decision, project, 20" in found and f"id {memory_id})" in found
    assert str(path) in found and "tags: db, sqlite" in found
    assert "SQLite runs in WAL mode" in found and body.strip() not in found
    assert len(found) < 1000
    # inspect(id) returns the whole file; inspect() the inventory without bodies.
    assert str(path) in whole and "title: Use WAL mode" in whole and body.strip() in whole
    assert "- [decision] Use WAL mode (" in inventory and "Details." not in inventory
    assert "Use WAL mode  (decision, project," in listing and str(path) in listing


def test_remember_the_same_title_twice_updates_one_file(home, project):
    async def scenario(s: Session):
        first = await s.ok("remember", kind="fact", title="CI runner", body="The runner is ci-1.")
        second = await s.ok("remember", kind="fact", title="ci runner", body="The runner is ci-2 now.")
        found = await s.ok("recall", query="runner")
        return first, second, found

    first, second, found = serve(home, project, scenario)
    [path] = memory_files(project / ".memory")
    assert first.startswith("Saved fact") and second.startswith("Updated fact 'ci runner'")
    assert field(first, "id") == field(second, "id")
    assert "ci-2 now" in path.read_text() and "ci-1" not in path.read_text()
    assert found.startswith("1 memory for 'runner'")


@pytest.mark.parametrize("where", ["body", "title", "tags"])
def test_a_credential_is_refused_and_nothing_is_written(home, project, where):
    arguments = {"kind": "fact", "title": "OpenAI key", "body": "Use the project key.", "tags": ["llm"]}
    arguments[where] = [SECRET] if where == "tags" else SECRET

    async def scenario(s: Session):
        refused = await s.call("remember", **arguments)
        found = await s.call("recall", query="openai")
        return refused, found

    refused, found = serve(home, project, scenario)
    assert refused.is_error and "refusing to save" in refused.text and "Nothing was written" in refused.text
    assert "sk-proj" not in refused.text
    assert memory_files(project / ".memory") == [] and not home.global_root.exists()
    assert not found.is_error and found.text.startswith("No memory matches")
    log = (home.state_dir / "memoryd.log").read_text()
    assert '"event": "memory.refused"' in log and "sk-proj" not in log


def test_the_remember_tool_refuses_every_format_the_scrubber_knows(home, project):
    async def scenario(s: Session):
        return [await s.call("remember", kind="fact", title=f"Credential {n}", body=case.text) for n, case in enumerate(CATALOGUE)]

    answers = serve(home, project, scenario)
    accepted = [case.kind for case, answer in zip(CATALOGUE, answers) if not answer.is_error]
    assert accepted == []
    assert memory_files(project / ".memory") == [] and not home.global_root.exists()
    assert not any(value in answer.text for case, answer in zip(CATALOGUE, answers) for value in case.values)


def test_global_scope_is_explicit_and_shared_by_every_project(home, project, tmp_path):
    other = make_git_worktree(tmp_path / "src" / "other")

    async def save(s: Session):
        return await s.ok("remember", kind="fact", title="GPU box", body="Ollama listens on 11434.", scope="global")

    async def look(s: Session):
        return (
            await s.ok("recall", query="ollama"),
            await s.ok("recall", query="ollama", scope="project"),
            await s.ok("list_memories", scope="global"),
        )

    saved = serve(home, project, save)
    everywhere, project_only, listed = serve(home, other, look)
    assert memory_files(home.global_root) == [home.global_root / "fact" / "gpu-box.md"]
    assert memory_files(project / ".memory") == []
    assert "(global, id" in saved
    assert "GPU box  (fact, global," in everywhere and project_only.startswith("No memory matches")
    assert "GPU box" in listed


def test_the_project_is_the_canonical_worktree_of_the_working_directory(home, project, tmp_path):
    (project / "pkg" / "sub").mkdir(parents=True)
    link = tmp_path / "link-to-app"
    link.symlink_to(project)

    async def save(s: Session):
        return await s.ok("remember", kind="gotcha", title="Symlinked checkout", body="Same project, one scope.")

    async def look(s: Session):
        return await s.ok("recall", query="symlinked", scope="project")

    serve(home, link / "pkg" / "sub", save)  # a subfolder, reached through a symlink
    assert memory_files(project / ".memory") == [project / ".memory" / "gotcha" / "symlinked-checkout.md"]
    assert "Symlinked checkout" in serve(home, project, look)


def test_outside_a_worktree_only_the_global_scope_takes_memories(home, tmp_path):
    loose = tmp_path / "loose"
    loose.mkdir()

    async def scenario(s: Session):
        refused = await s.call("remember", kind="fact", title="Loose", body="No project here.")
        saved = await s.ok("remember", kind="fact", title="Loose", body="Machine-wide.", scope="global")
        return refused, saved

    refused, saved = serve(home, loose, scenario)
    assert refused.is_error and 'scope="global"' in refused.text and "not inside a git worktree" in refused.text
    assert not (loose / ".memory").exists()
    assert "(global, id" in saved


def test_the_project_option_names_the_project_for_clients_that_start_servers_elsewhere(home, project, tmp_path):
    async def scenario(s: Session):
        return await s.ok("remember", kind="fact", title="Named project", body="Started elsewhere.")

    serve(home, tmp_path, scenario, "--project", str(project / "."))
    assert memory_files(project / ".memory") == [project / ".memory" / "fact" / "named-project.md"]


def test_list_filters_by_kind_and_clamps_the_limit(home, project):
    async def scenario(s: Session):
        for n in range(3):
            await s.ok("remember", kind="lesson", title=f"Lesson {n}", body=f"Learned thing {n}.")
        await s.ok("remember", kind="fact", title="A fact", body="Just a fact.")
        return (
            await s.ok("list_memories", kind="lesson"),
            await s.ok("list_memories", limit=0),
            await s.ok("list_memories", limit=500),
            await s.ok("recall", query="learned", limit=1000),
        )

    lessons, one, many, recalled = serve(home, project, scenario)
    assert lessons.count("(lesson, project,") == 3 and "A fact" not in lessons
    assert one.count(", id ") == 1 and "… more" in one  # limit 0 is clamped to 1
    assert many.count(", id ") == 4 and "… more" not in many
    assert recalled.startswith("3 memories for 'learned'")


def test_the_cli_and_the_server_share_trees_and_index_while_both_run(home, project, monkeypatch):
    monkeypatch.chdir(project)
    runner = CliRunner()

    async def scenario(s: Session):
        before = await s.ok("recall", query="pnpm")  # the server has opened the index
        shell = runner.invoke(cli, ["remember", "-k", "gotcha", "-t", "Pin pnpm", "CI needs pnpm 9."])
        assert shell.exit_code == 0, shell.output
        seen_by_agent = await s.ok("recall", query="pnpm")
        await s.ok("remember", kind="lesson", title="Retry flaky e2e", body="Retry the e2e job once.")
        seen_by_shell = runner.invoke(cli, ["recall", "flaky"]).output
        return before, seen_by_agent, seen_by_shell

    before, seen_by_agent, seen_by_shell = serve(home, project, scenario)
    assert before.startswith("No memory matches")
    assert "Pin pnpm  (gotcha, project," in seen_by_agent
    assert seen_by_shell.startswith("1. Retry flaky e2e  (lesson, project,")


# --- forget -----------------------------------------------------------------------------------


def test_forget_by_query_never_leaves_this_project_and_the_global_tree(home, project, tmp_path):
    other = make_git_worktree(tmp_path / "src" / "other")

    async def in_other(s: Session):
        return await s.ok("remember", kind="fact", title="Staging host", body="Staging is stage-3.")

    async def in_project(s: Session):
        nothing = await s.ok("forget", query="staging host")
        mine = await s.ok("remember", kind="fact", title="Old staging host", body="Staging was stage-1.")
        one = await s.ok("forget", query="staging host")
        return nothing, mine, one

    theirs_text = serve(home, other, in_other)
    theirs = other / ".memory" / "fact" / "staging-host.md"
    nothing, mine, one = serve(home, project, in_project)
    assert nothing.startswith("Nothing deleted: no memory in this project or the global tree")
    # The only match in scope is ours: deleted; the other project's is never touched.
    assert one.startswith("Forgot 'Old staging host'") and field(mine, "id") in one
    assert memory_files(project / ".memory") == []
    assert theirs.exists()

    # By id, a memory is deleted wherever it is (a closed worktree stays cleanable).
    async def by_id(s: Session):
        return await s.ok("forget", id=field(theirs_text, "id"))

    assert serve(home, project, by_id).startswith("Forgot 'Staging host'")
    assert not theirs.exists()


def test_forget_by_an_ambiguous_query_deletes_nothing_and_lists_ids(home, project):
    async def scenario(s: Session):
        a = await s.ok("remember", kind="fact", title="Deploy target A", body="deploy goes to host a")
        b = await s.ok("remember", kind="fact", title="Deploy target B", body="deploy goes to host b", scope="global")
        ambiguous = await s.ok("forget", query="deploy target")
        chosen = await s.ok("forget", id=field(b, "id"))
        return a, b, ambiguous, chosen

    a, b, ambiguous, chosen = serve(home, project, scenario)
    assert ambiguous.startswith("Nothing deleted: 2 memories match 'deploy target'")
    assert "with the id" in ambiguous and field(a, "id") in ambiguous and field(b, "id") in ambiguous
    assert chosen.startswith("Forgot 'Deploy target B'")
    assert len(memory_files(project / ".memory")) == 1 and memory_files(home.global_root) == []


# --- bad calls ----------------------------------------------------------------------------------


def test_bad_calls_are_error_results_and_the_server_keeps_serving(home, project):
    bad_calls = [
        ("recall", {}),  # missing query
        ("recall", {"query": "x", "limit": "many"}),
        ("recall", {"query": "x", "scope": "somewhere"}),
        ("recall", {"query": "   "}),
        ("remember", {"kind": "../etc", "title": "T", "body": "b"}),
        ("remember", {"kind": "fact", "title": "", "body": "b"}),
        ("remember", {"kind": "fact", "title": "T", "body": "b", "expires": "someday"}),
        ("remember", {"kind": "fact", "title": "T", "body": "b", "tags": "not-a-list"}),
        ("forget", {}),
        ("forget", {"id": "abc", "query": "x"}),
        ("forget", {"id": "000000000000"}),
        ("inspect", {"id": "000000000000"}),
        ("no_such_tool", {}),
    ]

    async def scenario(s: Session):
        errors = [(name, args, await s.call(name, **args)) for name, args in bad_calls]
        await s.ok("remember", kind="fact", title="Still alive", body="The server survived.")
        return errors, await s.ok("recall", query="survived")

    errors, found = serve(home, project, scenario)
    for name, args, result in errors:
        assert result.is_error, f"{name}({args}) should be an error: {result.text}"
        assert result.text.strip(), name
    messages = {json.dumps([name, args]): result.text for name, args, result in errors}
    assert "Field required" in messages[json.dumps(["recall", {}])]
    assert "the query is empty" in messages[json.dumps(["recall", {"query": "   "}])]
    assert "give either id" in messages[json.dumps(["forget", {}])]
    assert "no memory has the id" in messages[json.dumps(["forget", {"id": "000000000000"}])]
    assert "Still alive" in found
    assert memory_files(project / ".memory") == [project / ".memory" / "fact" / "still-alive.md"]


# --- logging and set-up ---------------------------------------------------------------------------


def test_logs_go_to_the_log_file_not_stdout_or_stderr(home, project):
    async def scenario(s: Session):
        await s.ok("remember", kind="fact", title="Logged", body="A line in the log.")
        await s.call("recall", query="x", limit="many")

    serve(home, project, scenario)
    log = (home.state_dir / "memoryd.log").read_text()
    assert '"event": "mcp.starting"' in log and '"event": "mcp.stopped"' in log
    assert '"event": "memory.remembered"' in log and '"title": "Logged"' in log
    assert (home.root / "mcp-stderr.txt").read_text() == ""


def test_print_config_for_opencode_and_claude(home):
    runner = CliRunner()
    opencode = runner.invoke(cli, ["mcp", "--print-config", "opencode"], catch_exceptions=False)
    assert opencode.exit_code == 0
    server = json.loads(opencode.stdout)["mcp"]["memoryd"]
    assert server["type"] == "local" and server["command"][-1] == "mcp"
    assert os.path.isabs(server["command"][0]) and os.access(server["command"][0], os.X_OK)
    assert "opencode.json" in opencode.stderr

    claude = runner.invoke(cli, ["--config", "memoryd.toml", "mcp", "--print-config", "claude"], catch_exceptions=False)
    assert claude.exit_code == 0
    add_line = next(line for line in claude.stdout.splitlines() if line.startswith("claude mcp add"))
    assert add_line.startswith("claude mcp add --scope user memoryd -- /")
    assert add_line.endswith(f"--config {os.path.abspath('memoryd.toml')} mcp")
    project_file = json.loads(claude.stdout[claude.stdout.index("{") :])
    entry = project_file["mcpServers"]["memoryd"]
    assert entry["type"] == "stdio" and os.path.isabs(entry["command"]) and entry["args"][-1] == "mcp"


# --- scope: another project's notes in the shared global tree ------------------------------


def _shared_global_tree(home, tmp_path: Path) -> tuple[Path, Path]:
    """Two worktrees without a tree of their own, whose notes sit side by side in the
    global tree (`project:` set, as memoryd writes them), and a machine-wide memory."""
    shop = make_git_worktree(tmp_path / "src" / "shop", memory=False)
    billing = make_git_worktree(tmp_path / "src" / "billing", memory=False)
    notes = home.global_root / "sessions"
    notes.mkdir(parents=True, exist_ok=True)
    for name, worktree in (("shop", shop), ("billing", billing)):
        (notes / f"{name}-deploy.md").write_text(
            f"---\nid: {name}-deploy\ntitle: {name} deploy rollback\nkind: session\nproject: {worktree}\n---\n\n"
            "The deploy rollback needed the previous image tag.\n",
            encoding="utf-8",
        )
    (home.global_root / "fact").mkdir(parents=True, exist_ok=True)
    (home.global_root / "fact" / "registry.md").write_text(
        "---\nid: mw-registry\ntitle: Deploy images come from the local registry\nkind: fact\n---\n\nrollback images too\n",
        encoding="utf-8",
    )
    return shop, billing


def test_recall_in_a_project_leaves_out_other_projects_notes_unless_asked(home, tmp_path):
    shop, _ = _shared_global_tree(home, tmp_path)

    async def scenario(s: Session):
        return await s.ok("recall", query="deploy rollback"), await s.ok("recall", query="deploy rollback", scope="everywhere")

    scoped, everywhere = serve(home, shop, scenario)
    assert "id shop-deploy)" in scoped and "id mw-registry)" in scoped
    assert "billing" not in scoped  # another project's note is not this session's to see
    assert "id billing-deploy)" in everywhere and "id shop-deploy)" in everywhere


def test_the_cli_recall_is_scoped_the_same_and_all_widens_it(home, tmp_path, monkeypatch):
    shop, _ = _shared_global_tree(home, tmp_path)
    monkeypatch.chdir(shop)
    runner = CliRunner()
    scoped = runner.invoke(cli, ["recall", "--json", "deploy", "rollback"])
    wide = runner.invoke(cli, ["recall", "--json", "--all", "deploy", "rollback"])
    assert scoped.exit_code == 0 and wide.exit_code == 0, scoped.output + wide.output
    ids = lambda result: {r["id"] for r in json.loads(result.output)["results"]}  # noqa: E731
    assert ids(scoped) == {"shop-deploy", "mw-registry"}
    assert ids(wide) == {"shop-deploy", "billing-deploy", "mw-registry"}

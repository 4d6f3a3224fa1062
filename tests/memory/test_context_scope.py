"""What a session's block may hold: its project's memories and machine-wide ones, only
those really about the prompt as previews, its own note never, everything within budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.memory.context import Budgets, build_context, estimate_tokens
from daemon.memory.index import SearchIndex
from daemon.memory.roots import MemoryRoot
from tests.memory.conftest import NOW, write_memory


def note(root: Path, name: str, project: Path, session: str, title: str, body: str, day: str = "2025-05-01") -> None:
    write_memory(root, f"sessions/{name}.md", f"title: {title}\nkind: session\nid: {session}\nsession_id: {session}\n"
                 f"project: {project}\nupdated: {day}", body)  # fmt: skip


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    project = tmp_path / "work" / "shop"
    (project / ".git").mkdir(parents=True)
    return project


@pytest.fixture
def billing(tmp_path: Path) -> Path:
    project = tmp_path / "work" / "billing"
    (project / ".git").mkdir(parents=True)
    return project


@pytest.fixture
def shared(global_root: MemoryRoot, shop: Path, billing: Path, index: SearchIndex) -> MemoryRoot:
    """One global tree holding both projects' notes and memories, and machine-wide ones."""
    g = global_root.path
    note(g, "shop-deploy", shop / "web", "ses_shop1", "Shop deploy fails on healthz",
         "The nightly deploy of the shop timed out: the /healthz probe waited on the database.")  # fmt: skip
    note(g, "billing-rust", billing, "ses_bill1", "Billing borrow checker fight",
         "The invoice builder held a borrow across await; cloned the totals instead.")  # fmt: skip
    write_memory(g, "lesson/bill.md", f"title: Invoice totals are cloned before await\nkind: lesson\nid: bill-lesson\n"
                 f"project: {billing}", "Holding the borrow across await fails to compile.")  # fmt: skip
    write_memory(g, "gotcha/shop.md", f"title: Healthz must not touch the database\nkind: gotcha\nid: shop-gotcha\n"
                 f"project: {shop}", "The probe timed out whenever the database was slow; keep it static.")  # fmt: skip
    write_memory(g, "fact/editor.md", "title: Editor is helix\nkind: fact\nid: machine-fact", "Use hx to edit files.")
    write_memory(g, "rule/secrets.md", "title: Never print secrets\nkind: rule\nhard_rule: true\nid: g-rule\n"
                 "description: Mask tokens in deploy logs", "Mask tokens in deploy logs.")  # fmt: skip
    index.sync_root(global_root)
    return global_root


def roots_of(project: Path, global_root: MemoryRoot) -> list[MemoryRoot]:
    return [MemoryRoot(project / ".memory", "project"), global_root]


def test_a_project_sees_its_own_and_machine_wide_memories_never_anothers(
    index: SearchIndex, shared: MemoryRoot, shop: Path, billing: Path
) -> None:
    block = build_context(index, roots_of(shop, shared), NOW, prompt="borrow checker invoice totals await").block
    assert "ses_bill1" not in block and "bill-lesson" not in block and "Billing" not in block
    assert "shop-gotcha" in block and "ses_shop1" in block and "machine-fact" in block
    other = build_context(index, roots_of(billing, shared), NOW, prompt="healthz deploy probe").block
    assert "shop-gotcha" not in other and "ses_shop1" not in other and "bill-lesson" in other


def test_nothing_relevant_means_no_relevant_section(index: SearchIndex, shared: MemoryRoot, shop: Path) -> None:
    for prompt in ("How do I center a div with flexbox?", "今日はいい天気ですね", "请帮我写一首诗", "Can you keep going, I think?"):
        context = build_context(index, roots_of(shop, shared), NOW, prompt=prompt)
        assert "## Relevant" not in context.block and context.relevant_ids == (), prompt


def test_the_relevant_memory_is_found_in_several_languages(index: SearchIndex, shared: MemoryRoot, shop: Path) -> None:
    write_memory(shared.path, "decision/db.md", f"title: 数据库迁移用 dbmate\nkind: decision\nid: zh-dec\nproject: {shop}",
                 "数据库迁移统一用 dbmate，不用手写 SQL。")  # fmt: skip
    index.sync_root(shared)
    roots = roots_of(shop, shared)
    assert build_context(index, roots, NOW, prompt="Why does the healthz probe time out?").relevant_ids[0] == "shop-gotcha"
    assert build_context(index, roots, NOW, prompt="数据库迁移应该用什么工具？").relevant_ids == ("zh-dec",)


def test_a_hard_rule_is_never_listed_twice(index: SearchIndex, shared: MemoryRoot, shop: Path) -> None:
    block = build_context(index, roots_of(shop, shared), NOW, prompt="mask tokens in the deploy logs").block
    assert block.count("id g-rule") == 1


def test_curated_memories_beat_a_session_note_quoting_the_prompt(index: SearchIndex, shared: MemoryRoot, shop: Path) -> None:
    note(shared.path, "quote", shop, "ses_quote", "Why does healthz time out",
         "The user asked: why does the healthz probe time out when the database is slow? We talked.")  # fmt: skip
    index.sync_root(shared)
    ids = build_context(index, roots_of(shop, shared), NOW, prompt="why does the healthz probe time out?").relevant_ids
    assert ids[0] == "shop-gotcha"


def test_a_sessions_own_note_is_never_in_its_block(index: SearchIndex, shared: MemoryRoot, shop: Path) -> None:
    roots = roots_of(shop, shared)
    before = build_context(index, roots, NOW, prompt="healthz probe database", session="ses_new")
    note(shared.path, "new", shop, "ses_new", "Healthz probe database work", "Moved the healthz probe off the database.",
         day="2025-05-30")  # fmt: skip
    index.sync_root(shared)
    after = build_context(index, roots, NOW, prompt="healthz probe database", session="ses_new")
    assert "ses_new" not in after.block
    assert after.block == before.block and after.generation == before.generation
    assert "ses_new" in build_context(index, roots, NOW, prompt="healthz probe database").block


def test_previews_are_the_memorys_own_words(index: SearchIndex, shared: MemoryRoot, shop: Path) -> None:
    write_memory(shared.path, "lesson/tokens.md", f"title: Deploy tokens come from the vault\nkind: lesson\nid: vault\n"
                 f"project: {shop}", "Deploy tokens come from the vault, never from env files. The token "
                 "[REDACTED:github-token] was rotated.\n\nSources:\n- session `ses_x`: [Vault](../sessions/x.md)")  # fmt: skip
    index.sync_root(shared)
    block = build_context(index, roots_of(shop, shared), NOW, prompt="where do deploy tokens come from, the vault?").block
    preview = next(line for line in block.splitlines() if "id vault): " in line)
    assert "REDACTED" not in preview and "Sources" not in preview and "](" not in preview
    assert "never from env files." in preview


def test_routing_has_a_budget_and_puts_the_prompts_scenarios_first(index: SearchIndex, shop: Path, global_root: MemoryRoot) -> None:
    project = MemoryRoot(shop / ".memory", "project")
    for n in range(200):
        write_memory(project.path, f"fact/s{n:03}.md", f"title: Fact {n}\nkind: fact\nid: s{n:03}\n"
                     f"scenarios: [area {n:03} work]")  # fmt: skip
    write_memory(project.path, "fact/zz.md", "title: Kafka\nkind: fact\nid: kafka\nscenarios: [kafka consumer lag]")
    index.sync_root(project)
    block = build_context(index, [project, global_root], NOW, prompt="the kafka consumer lag grows").block
    routing = block.split("## Where to look", 1)[1].split("\n\n", 1)[0]
    assert len(routing) <= Budgets().routing_chars + 120
    assert routing.splitlines()[1].startswith("- kafka consumer lag") and "more scenarios" in routing


def test_the_whole_block_keeps_its_token_budget(index: SearchIndex, shop: Path, global_root: MemoryRoot) -> None:
    project = MemoryRoot(shop / ".memory", "project")
    for n in range(30):
        write_memory(project.path, f"rule/r{n:02}.md", f"title: 规则 {n} {'很长的规则' * 20}\nkind: rule\nhard_rule: true\nid: r{n:02}")
        write_memory(project.path, f"lesson/l{n:02}.md", f"title: 部署 教训 {n} {'长标题' * 20}\nkind: lesson\nid: l{n:02}",
                     "部署失败的原因 " * 40)  # fmt: skip
    index.sync_root(project)
    context = build_context(index, [project, global_root], NOW, prompt="部署失败的原因是什么")
    assert estimate_tokens(context.block) <= Budgets().block_tokens


def test_a_word_is_common_or_not_among_what_the_session_sees(
    index: SearchIndex, global_root: MemoryRoot, shop: Path, billing: Path
) -> None:
    g = global_root.path
    for n in range(40):  # the shop's every note mentions its webhook, billing's none
        note(g, f"shop-{n}", shop, f"ses_s{n}", f"Shop session {n}", f"Looked at the webhook retries of order {n}.")
        note(g, f"bill-{n}", billing, f"ses_b{n}", f"Billing session {n}", f"Rounded the VAT of invoice {n}.")
    write_memory(g, "gotcha/hook.md", f"title: Billing webhook needs the raw body\nkind: gotcha\nid: bill-hook\nproject: {billing}",
                 "Verify the signature before parsing.")  # fmt: skip
    write_memory(g, "gotcha/shophook.md", f"title: Shop webhook signature\nkind: gotcha\nid: shop-hook\nproject: {shop}",
                 "The signing secret rotates monthly.")  # fmt: skip
    index.sync_root(global_root)
    # In billing, which sees one memory about a webhook, the word decides ...
    assert build_context(index, roots_of(billing, global_root), NOW, prompt="the webhook").relevant_ids == ("bill-hook",)
    # ... in the shop, where forty-one of its memories hold it, it does not (signature does).
    assert build_context(index, roots_of(shop, global_root), NOW, prompt="the webhook").relevant_ids == ()
    assert build_context(index, roots_of(shop, global_root), NOW, prompt="webhook signature").relevant_ids == ("shop-hook",)
    for n in range(40):  # now billing's notes hold it too: what was counted is counted again
        note(g, f"bill-{n}", billing, f"ses_b{n}", f"Billing session {n}", f"Retried the webhook of invoice {n}.")
    index.sync_root(global_root)
    assert build_context(index, roots_of(billing, global_root), NOW, prompt="the webhook").relevant_ids == ()


def test_a_words_verdict_in_a_scope_settled_by_its_counts_is_the_one_a_walk_gives(
    index: SearchIndex, global_root: MemoryRoot, shop: Path, billing: Path
) -> None:
    """A word held by too few memories of the store to be common in the scope, or by so
    many that the scope must hold enough of them, is judged without walking postings: the
    verdict is the one counting the scope's memories gives."""
    from daemon.memory import relevance

    g = global_root.path
    for n in range(30):
        write_memory(g, f"fact/shop{n}.md", f"title: Shop fact {n}\nkind: fact\nproject: {shop}", f"deploy canary shopword{n % 2} s{n}")
        write_memory(g, f"fact/bill{n}.md", f"title: Bill fact {n}\nkind: fact\nproject: {billing}", f"deploy ledger b{n}")
    for n in range(8):
        write_memory(g, f"fact/few{n}.md", f"title: Few {n}\nkind: fact\nproject: {shop}", "fewword")
    index.sync_root(global_root)
    roots = roots_of(shop, global_root)
    words = ["deploy", "canary", "ledger", "fewword", "shopword0", "shopword1"]
    df = index.doc_counts(words)
    total, seen = index.count(), index.scope_size(roots, NOW, str(shop))
    limit = int(max(relevance.SCOPE_COMMON_MIN, relevance.COMMON_MIN * seen / total, relevance.COMMON_SHARE * seen))
    settled = relevance._common_forms(index, roots, NOW, str(shop), {w: (w,) for w in words}, df, total)
    walked = index.scoped_counts(words, roots, NOW, str(shop), limit)
    assert settled == {w for w in words if walked[w] > limit}
    assert "deploy" in settled and "ledger" not in settled and "fewword" not in settled

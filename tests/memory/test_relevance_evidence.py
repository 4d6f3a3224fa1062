"""Evidence a person would accept, in a store too small for its own statistics to tell a
common word from a rare one: general-language frequency, the prompt's informative
content, an exact identifier, typos against the index's vocabulary, verbs both ways."""

from __future__ import annotations

from daemon.memory import commonness, wordforms
from daemon.memory.context import build_context
from daemon.memory.index import SearchIndex
from daemon.memory.roots import MemoryRoot
from tests.memory.conftest import NOW
from tests.memory.test_relevance_words import _put, shown


def _small_store(root: MemoryRoot) -> None:
    """Five memories: every word of each is in one memory only, so the store's IDF alone
    weighs "building" as much as "lockfile"."""
    _put(root, "tiles", "decision", "Building the map tiles once a night", "The tile server renders them at two.")
    _put(root, "lock", "lesson", "pnpm deploy needs the frozen lockfile", "pnpm install rewrote pnpm-lock.yaml on the CI runner.")
    _put(root, "redis", "gotcha", "Redis visibility timeout must exceed the longest job", "Jobs ran twice when the timeout was 30 s.")
    _put(root, "url", "fact", "The preview URL of a branch", "Every branch gets a preview URL on the staging host.")
    _put(root, "env", "session", "Why does the deploy keep failing",
         "Outcome: NEXT_PUBLIC_API_URL was missing in the production build; added it to the env file.")  # fmt: skip


def test_general_language_tells_an_everyday_word_from_a_rare_one() -> None:
    assert commonness.zipf("the") > commonness.zipf("building") > commonness.zipf("tile") > commonness.zipf("lockfile") == 0
    assert commonness.specificity("lockfile") == 1.0 and commonness.specificity("the") == commonness.FLOOR
    assert commonness.specificity("building") < 0.5 < commonness.specificity("timeout")
    assert commonness.zipf("数据库") > 0 and commonness.zipf("데이터") > 0 and commonness.zipf("データ") > 0  # zh, ko, ja lists


def test_one_incidental_word_does_not_decide_in_a_small_store(index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot) -> None:
    _small_store(project_root)
    roots = [project_root, global_root]
    index.sync_root(project_root)
    assert shown(index, roots, "the building's elevator is broken, who do I call?") == ()
    assert shown(index, roots, "pnpm workspace: how do I run a script in every package?") == ()
    # the memory's own topic, asked in other words, still is
    assert shown(index, roots, "pnpm rewrites the lockfile on CI") == ("lock",)
    assert shown(index, roots, "how often are the map tiles rendered?") == ("tiles",)


def test_the_same_entity_with_another_problem_is_not_relevant(index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot) -> None:
    _small_store(project_root)
    roots = [project_root, global_root]
    index.sync_root(project_root)
    assert shown(index, roots, "Redis cluster failover drops our pub/sub subscribers") == ()
    assert shown(index, roots, "jobs run twice, is the redis visibility timeout too short?") == ("redis",)


def test_an_exact_identifier_beats_its_fragments(index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot) -> None:
    _small_store(project_root)
    roots = [project_root, global_root]
    index.sync_root(project_root)
    # the body holds NEXT_PUBLIC_API_URL itself; the other memory's title holds "url" only
    assert shown(index, roots, "NEXT_PUBLIC_API_URL is undefined in the browser") == ("env",)


def test_a_memory_holding_the_identifier_is_not_pushed_out_by_one_holding_a_part_of_it(
    index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot
) -> None:
    # "server" (a part of ~/.vscode-server) and "cluster" are in the second memory: more
    # of the prompt's units, but not the identifier the first one names
    _put(project_root, "vscode", "lesson", "~/.vscode-server eats the disk quota", "Move it to scratch and link it back.")
    _put(project_root, "utc", "fact", "Servers and logs are in UTC", "Every node of the cluster logs in UTC, not local time.")
    index.sync_root(project_root)
    roots = [project_root, global_root]
    assert "vscode" in shown(index, roots, "my home on the cluster is full and ~/.vscode-server alone is 12 GB")


def test_a_camel_case_identifier_of_several_words_is_evidence_enough(
    index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot
) -> None:
    # "why use viewModelScope": the identifier is the prompt's one held unit, outweighed by
    # the words around it no memory holds; held exactly, it decides as DEPLOY_ENV does
    _put(project_root, "scope", "lesson", "뷰모델에서는 viewModelScope로 코루틴을 실행한다",
         "GlobalScope로 실행한 코루틴이 화면을 나간 뒤에도 계속 돌았다.")  # fmt: skip
    _put(project_root, "gh", "fact", "The repository lives on GitHub", "Pull requests need one review.")
    index.sync_root(project_root)
    roots = [project_root, global_root]
    assert shown(index, roots, "viewModelScope 쓰는 이유") == ("scope",)
    # a name of two words (GitHub) is a product's, not an identifier: one word in passing
    assert shown(index, roots, "rename the default branch on GitHub and locally") == ()


def test_a_typo_is_read_as_the_word_the_index_holds(index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot) -> None:
    _put(project_root, "hydration", "gotcha", "React hydration mismatch from Date.now() in render", "Render the time in an effect.")
    _put(project_root, "other", "fact", "Nightly jobs", "The queue of the nightly jobs runs at two.")
    roots = [project_root, global_root]
    index.sync_root(project_root)
    assert index.near_term("hydartion", 2) == "hydration"  # two letters swapped: one edit
    assert index.near_term("hydration", 2) is None  # a word the index holds is no typo
    assert shown(index, roots, "hydartion mismatch again") == ("hydration",)
    assert shown(index, roots, "struct mismatch") == ()  # a rare real word is not read as another


def test_irregular_verbs_are_read_both_ways(index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot) -> None:
    assert "paid" in wordforms.inflections("pay") and wordforms.canonical("paid") == "pay"
    assert "built" in wordforms.inflections("build")
    _put(project_root, "paid", "gotcha", "Invoices paid twice after a webhook retry", "The handler was not idempotent.")
    _put(project_root, "built", "lesson", "Images built on the CI runner miss the cache", "Use the registry cache.")
    roots = [project_root, global_root]
    index.sync_root(project_root)
    assert shown(index, roots, "customers pay the same invoice twice") == ("paid",)
    assert shown(index, roots, "build images on the runner without the cache?") == ("built",)


def test_a_preview_does_not_repeat_its_title_or_the_prompt(index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot) -> None:
    body = (
        "## What Was Worked On\n\n- Why does the deploy keep failing\n- the deploy keeps failing on CI with DEPLOY_ENV, fix it\n\n"
        "## Outcome / Current State\n\n- DEPLOY_ENV was spelled prodution in .env.production; fixed the spelling."
    )
    _put(project_root, "env", "session", "Why does the deploy keep failing", body)
    roots = [project_root, global_root]
    index.sync_root(project_root)
    prompt = "the deploy keeps failing on CI with DEPLOY_ENV, fix it"
    block = build_context(index, roots, NOW, prompt=prompt)
    assert block.relevant_ids == ("env",)
    preview = next(line for line in block.block.splitlines() if "id env):" in line)
    assert "prodution" in preview  # what the note found
    assert prompt not in preview and preview.count("Why does the deploy keep failing") == 1  # the title, once


def test_session_notes_repeating_the_question_do_not_push_out_the_lesson_that_answers(
    index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot
) -> None:
    _put(project_root, "lesson", "lesson", "Webhook signatures need the raw request body",
         "The stripe webhook handler must read the raw body: a parsed body breaks the signature check.")  # fmt: skip
    question = "why does the stripe webhook signature check fail in production?"
    for n in range(3):
        _put(project_root, f"s{n}", "session", f"Stripe webhook signature check fails ({n})",
             f"## What Was Worked On\n\n- {question} Check the README first.\n\n## Outcome / Current State\n\n- Read the README.")  # fmt: skip
    _small_store(project_root)  # a store of about a dozen: its statistics say little
    for n, topic in enumerate(("nightly report mail", "tmux copy mode", "gradle cache on ci", "dark mode toggle")):
        _put(project_root, f"other{n}", "fact", topic.capitalize(), f"About the {topic}.")
    roots = [project_root, global_root]
    index.sync_root(project_root)
    shown_ids = shown(index, roots, f"{question} Check the README first.")
    assert shown_ids and shown_ids[0] == "lesson"

"""What a prompt's words stand for: the glossary's concepts, broad words, filler, pasted output."""

from __future__ import annotations

from daemon.memory import wordforms
from daemon.memory.context import build_context
from daemon.memory.index import SearchIndex
from daemon.memory.prompt_terms import content_terms
from daemon.memory.roots import MemoryRoot
from daemon.memory.stopwords import is_stop
from tests.memory.conftest import NOW, write_memory


def shown(index: SearchIndex, roots: list[MemoryRoot], prompt: str) -> tuple[str, ...]:
    return build_context(index, roots, NOW, prompt=prompt).relevant_ids


def _put(root: MemoryRoot, mid: str, kind: str, title: str, body: str) -> None:
    write_memory(root.path, f"{kind}/{mid}.md", f"title: {title}\nkind: {kind}\nid: {mid}", body)


def test_an_inflected_stop_word_is_filler_and_a_status_code_of_the_glossary_is_a_word() -> None:
    assert all(is_stop(w) for w in ("moved", "going", "thinks", "getting"))
    assert not any(is_stop(w) for w in ("tests", "states", "started", "builds"))
    assert content_terms("we moved the cluster in 2026 and now 429 everywhere") == ["cluster", "429"]


def test_a_symptom_in_other_words_finds_the_memory_naming_it(index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot) -> None:
    _put(project_root, "stuck", "session", "Airflow scheduler stuck after upgrade", "Outcome: airflow db migrate fixed it.")
    _put(project_root, "drift", "session", "Terraform plan shows drift on the VPC",
         "Outcome: someone changed the security group in the console; imported the change.")  # fmt: skip
    _put(project_root, "rate", "session", "レート制限のバグ修正", "結果: Redis のキーの有効期限を毎回延長していた。")
    _put(project_root, "other", "fact", "Nightly jobs", "The queue of the nightly jobs runs at two.")
    roots = [project_root, global_root]
    index.sync_root(project_root)
    assert shown(index, roots, "DAG runs sit in the queued state forever after the scheduler upgrade") == ("stuck",)
    assert shown(index, roots, "somebody edited the firewall by hand and now terraform wants to undo it") == ("drift",)
    assert shown(index, roots, "terraform drift on the sg") == ("drift",)
    assert shown(index, roots, "some users get 429 forever, the throttling never lifts") == ("rate",)
    # a phrase of the glossary written as two words in the prompt
    assert wordforms.concept_of("securitygroup") == wordforms.concept_of("firewall")
    assert "security group" in wordforms.concept_of("firewall").alternatives()


def test_a_word_on_two_lines_of_the_glossary_stands_for_both() -> None:
    queued = wordforms.concept_of("queued").alternatives()
    assert "stuck" in queued and "queue" in queued
    assert "stuck" not in wordforms.concept_of("queue").alternatives()  # a queue is not stuck


def test_a_tools_name_alone_beside_words_no_memory_holds_is_not_about_a_memory(
    index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot
) -> None:
    _put(project_root, "lock", "lesson", "pnpm deploy needs the frozen lockfile", "pnpm install rewrote pnpm-lock.yaml on the CI runner.")
    _put(project_root, "tokio", "session", "Upgrade tokio to 1.38", "Outcome: the only change was a renamed runtime builder option.")
    _put(project_root, "proguard", "gotcha", "릴리스 빌드에서 Retrofit 모델이 ProGuard에 의해 제거됨", "JSON 파싱이 실패했다.")
    roots = [project_root, global_root]
    index.sync_root(project_root)
    assert shown(index, roots, "what does tokio::select! do when both branches are ready?") == ()
    assert shown(index, roots, "pnpm why react: which package pulls in a second copy?") == ()
    assert shown(index, roots, "Retrofit 로 파일 업로드 하는 방법") == ()  # Korean words no memory holds count too
    # with a word that is not broad, or when the tool is all the prompt says; not when most
    # of what the prompt says (async, gotchas) is in no memory: one word of it is not enough
    assert shown(index, roots, "bumping the tokio runtime again, any gotchas?") == ("tokio",)
    assert shown(index, roots, "bumping the async runtime again, any gotchas?") == ()
    assert shown(index, roots, "pnpm keeps rewriting the lockfile") == ("lock",)
    assert shown(index, roots, "tokio") == ("tokio",)


def test_two_tools_named_in_a_title_are_a_topic(index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot) -> None:
    _put(project_root, "ssh", "gotcha", "SSH agent forwarding breaks inside tmux after reattaching", "SSH_AUTH_SOCK points at a dead socket.")
    _put(project_root, "runs", "lesson", "Airflow backfills must run one at a time", "The DAG of daily sales.")
    roots = [project_root, global_root]
    index.sync_root(project_root)
    assert shown(index, roots, "why does ssh stop working when I come back to tmux after lunch?") == ("ssh",)
    assert shown(index, roots, "airflow: how do I run a DAG from the UI?") == ()  # an action is no second tool


def test_the_words_the_user_wrote_after_a_long_paste_are_read(index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot) -> None:
    _put(project_root, "mig", "lesson", "マイグレーションは本番デプロイの前に別ジョブで流す",
         "デプロイと同時にマイグレーションを実行したら、古いポッドが新しいスキーマで落ちた。")  # fmt: skip
    roots = [project_root, global_root]
    index.sync_root(project_root)
    for count in (20, 60):  # more tokens than a query holds; more characters than are searched
        frames = "\n".join(f"main.frame{n}(0xc000{n:04x}, 0x{n:x})\n\t/src/internal/part{n}/file{n}.go:{n} +0x2f" for n in range(count))
        prompt = f"the old pods crash mid-rollout:\n```\npanic: column does not exist\n{frames}\n```\nthe job runs the migration and the deploy together"
        assert shown(index, roots, prompt) == ("mig",)


def test_an_action_in_a_body_is_a_word_in_passing(index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot) -> None:
    _put(project_root, "flaky", "session", "Fix flaky checkout e2e spec",
         "Outcome: the Playwright checkout test failed one run in five; it now waits for the confirmation.")  # fmt: skip
    _put(project_root, "pool", "lesson", "Backfills exhaust the connection pool", "Set max_active=1 for the daily_sales job.")
    roots = [project_root, global_root]
    index.sync_root(project_root)
    assert shown(index, roots, "run the unit tests") == ()
    assert shown(index, roots, "who set up the alert for the daily_sales rows?") == ("pool",)  # the identifier, not "set"
    assert shown(index, roots, "who set up the sales alert?") == ()
    assert shown(index, roots, "the playwright checkout spec is flaky") == ("flaky",)


def test_one_lesser_word_is_not_enough_when_another_memory_names_a_weightier_one(
    index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot
) -> None:
    _put(project_root, "sqlx", "gotcha", "sqlx offline mode needs the query cache regenerated", "Run cargo sqlx prepare after a migration.")
    _put(project_root, "ssh", "gotcha", "SSH agent forwarding breaks inside tmux after reattaching", "SSH_AUTH_SOCK points at a dead socket.")
    _put(project_root, "dark", "fact", "Dark mode", "The mode is kept per user.")  # mode is commoner than tmux
    for n in range(40):
        _put(project_root, f"f{n}", "fact", f"Nightly report {n}", f"Report {n} is mailed at night.")
    roots = [project_root, global_root]
    index.sync_root(project_root)
    assert shown(index, roots, "tmux copy mode") == ()
    assert shown(index, roots, "sqlx offline mode again") == ("sqlx",)


def test_developer_words_are_found_across_languages_and_a_file_format_is_broad(
    index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot
) -> None:
    _put(project_root, "dedupe", "session", "Slow pandas merge in the customer dedupe job",
         "Outcome: the dedupe job took 40 minutes; the merge now uses a hashed key column.")  # fmt: skip
    _put(project_root, "proguard", "gotcha", "릴리스 빌드에서 Retrofit 모델이 ProGuard에 의해 제거됨", "모델 클래스에 @Keep을 붙인다.")
    _put(project_root, "log", "decision", "ログは slog の JSON 形式で出力する", "標準ライブラリの log/slog を使う。")
    roots = [project_root, global_root]
    index.sync_root(project_root)
    assert shown(index, roots, "客户去重的任务又跑了四十分钟，之前是怎么优化的？") == ("dedupe",)
    assert shown(index, roots, "PR: enable minifyEnabled for release builds") == ("proguard",)
    assert shown(index, roots, "Go で JSON をパースする一番簡単な方法") == ()  # JSON alone names no topic


def test_everyday_concepts_a_colleague_hears_as_one(index: SearchIndex, project_root: MemoryRoot, global_root: MemoryRoot) -> None:
    _put(project_root, "money", "decision", "Money is rust_decimal::Decimal, never a float", "Rounding of the VAT sums happens once, at the end.")
    _put(project_root, "signin", "gotcha", "Login redirects drop the next parameter", "The redirect after the login page loses ?next.")
    _put(project_root, "other", "fact", "Nightly jobs run at two", "The scheduler starts them.")
    roots = [project_root, global_root]
    index.sync_root(project_root)
    # an amount, a currency, 金額 are money; signing in is the login
    assert shown(index, roots, "what type should the money amount be?") == ("money",)
    assert shown(index, roots, "which currency is that amount in?") == ("money",)
    assert shown(index, roots, "請求の金額はどの型で持つ？") == ("money",)
    assert shown(index, roots, "after sign in the next param is gone") == ("signin",)
    assert wordforms.concept_of("currency") == wordforms.concept_of("amount")

"""Held-out batch 3 for bench_relevance.py, on the memories of relevance_set.py.

How it was built (a different method from batches 1 and 2, which were written freely
from the memories' content): a matrix, fixed before the prompts were written. Every
memory of the set gets exactly one prompt, in the set's order, and the *kind* of prompt
is assigned by rotation (memory number mod 4), not chosen to suit the memory:

- A, paraphrase: the same question in other words, reusing as few of the memory's words
  as a developer naturally would (BQ for BigQuery, "lock file", "deployment");
- B, cross-language: asked in a language other than the memory's (an English memory
  asked in Chinese, Japanese or Korean; a CJK memory asked in English);
- C, identifier: names a command, config key or code identifier the memory holds, or a
  near form of it (`pd.merge`, `org.gradle.caching`, `GlobalScope.launch`), with prose;
- D, symptom: what the user sees (a status code, a log line, a stuck queue), not the
  cause the memory names.

Then negatives, written after the positives and without looking at the ranking:
near misses (a prompt sharing a memory's most distinctive word, pnpm, tmux, pandas,
pods, 日志, but asking something the memory does not answer), prompts about nothing
stored in four languages, and another project's topic asked in this project. Machine-wide
memories are asked from a project chosen in rotation. Labels (what a colleague who knew
every memory would hand over) were fixed before the first run on main's code and are not
changed to fit results.
"""

from __future__ import annotations

# (project the session runs in, prompt, memories that should be shown)
HELDOUT_3: list[tuple[str, str, list[str]]] = [
    # rotation A, B, C, D over the set's memories, in order
    ("shop", "the pipeline regenerates the pnpm lock file on every release", ["shop-lockfile"]),  # A
    ("shop", "数据库一慢，Kubernetes 就把 pod 杀掉重启", ["shop-healthz"]),  # B
    ("shop", "remotePatterns in next.config.js: which bucket did we list?", ["shop-images"]),  # C
    ("shop", "payments webhook returns 400 in prod since we added the JSON middleware", ["shop-stripe"]),  # D
    ("shop", "the refresh hook double-fires its timer locally, only in dev", ["shop-polling"]),  # A
    ("shop", "Playwright 결제 테스트가 다섯 번에 한 번 꼴로 실패해요", ["shop-s1"]),  # B
    ("shop", "classes built with template strings vanish: do they go in tailwind.config.js?", ["shop-s2"]),  # C
    ("datapipe", "warehouse says too many connections whenever we rerun last month", ["dp-backfill"]),  # D
    ("datapipe", "BQ rejects the datetime columns in our pandas exports, precision mismatch?", ["dp-parquet"]),  # A
    ("datapipe", "SQL 转换逻辑应该写在 dbt 里还是 Airflow 的 operator 里？", ["dp-dbt"]),  # B
    ("datapipe", "pd.merge on the email column takes 40 minutes", ["dp-s1"]),  # C
    ("datapipe", "after the version bump, DAGs stay queued and nothing runs", ["dp-s2"]),  # D
    ("billing", "the compiler says my async invoice function's future isn't thread-safe because a reference lives past an await point", ["bill-borrow"]),  # A
    ("billing", "金額の計算で浮動小数点の丸め誤差が出る、Rust ではどう扱ってた？", ["bill-decimal"]),  # B
    ("billing", "SQLX_OFFLINE build in CI after a new migration", ["bill-sqlx"]),  # C
    ("billing", "downloading a big invoice as PDF gives a 504", ["bill-s1"]),  # D
    ("infra", "两个同事一起执行变更，tfstate 损坏了，要怎么加锁？", ["infra-state"]),  # A
    ("infra", "the Java service takes 40s to boot and the rolling deploy fails its readiness check", ["infra-probe"]),  # B
    ("infra", "用 cert-manager 的 ClusterIssuer 配 Let's Encrypt", ["infra-cert"]),  # C
    ("infra", "节点上 df 显示 100%，容器日志占满了", ["infra-s1"]),  # D
    ("infra", "a colleague changed firewall rules by hand in AWS, how did we reconcile that with our IaC?", ["infra-s2"]),  # A
    ("jpapi", "Can we run the DB migration together with the deploy?", ["jp-migrate"]),  # B
    ("jpapi", "ハンドラの ctx は context.Background() のままでいい？", ["jp-context"]),  # C
    ("jpapi", "レートリミットがいつまでもリセットされない", ["jp-s1"]),  # D
    ("jpapi", "タイムゾーンが違う環境だけでテストが失敗する", ["jp-s2"]),  # A
    ("mobile", "release build strips my Retrofit data classes, JSON parsing fails only in release", ["mob-proguard"]),  # B
    ("mobile", "lifecycleScope 아니면 viewModelScope, 뭐가 맞아요?", ["mob-coroutine"]),  # C
    ("mobile", "안드로이드 13 기기에서만 알림이 안 떠요", ["mob-s1"]),  # D
    ("billing", "what text editor is set up on this machine and where is its config?", ["mw-editor"]),  # A
    ("jpapi", "tmux に再接続すると ssh-agent が使えなくなる", ["mw-ssh"]),  # B
    ("infra", "docker system df shows 60GB of build cache", ["mw-docker"]),  # C
    ("mobile", "GitHub shows my commits as Unverified", ["mw-git"]),  # D
    ("shop", "the deployment environment variable has a typo somewhere, builds fail", ["shop-s3"]),  # A
    ("shop", "管理画面で価格を変えても商品ページに反映されない、ISR の revalidate は？", ["shop-cache"]),  # B
    ("datapipe", "great_expectations suite for order_id not null", ["dp-s3"]),  # C
    ("billing", "after cargo update tokio, the runtime Builder method no longer exists", ["bill-s2"]),  # D
    ("infra", "新加的域名没有自动解析，Ingress 是不是少了什么？", ["infra-dns"]),  # A
    ("jpapi", "which structured logging format do we use, JSON?", ["jp-logging"]),  # B
    ("mobile", "org.gradle.caching=true 를 CI 에서 켜면 빨라지나요?", ["mob-gradle"]),  # C
    # near misses: a memory's distinctive word, another question
    ("shop", "pnpm add a new workspace package to the monorepo", []),
    ("datapipe", "convert this pandas DataFrame to a dict of lists", []),
    ("infra", "写一个 Python 脚本统计日志里的 IP 数量", []),
    ("mobile", "Kotlin 에서 data class 와 일반 class 차이", []),
    ("shop", "what's the keyboard shortcut to split a pane in tmux?", []),
    ("infra", "kubectl get pods 输出太长，怎么只看名字？", []),
    ("datapipe", "what timezone is the cron schedule of this DAG in?", []),
    # nothing stored
    ("billing", "how do I pretty-print a struct with {:#?}", []),
    ("jpapi", "Go のジェネリクスの書き方を教えて", []),
    ("infra", "帮我写个正则匹配邮箱", []),
    ("mobile", "코드 리뷰 코멘트를 정중하게 써 주세요", []),
    ("jpapi", "このSQLをもっと速くして", []),
    # another project's topic
    ("mobile", "Terraform drift after a console change", []),
    ("jpapi", "the Playwright checkout test is flaky", []),
    ("shop", "viewModelScope vs GlobalScope", []),
    ("billing", "max_active_runs for backfills", []),
]

'''Held-out batch 8 for bench_relevance.py, on the memories of relevance_set.py.

How it was built: written by the lead at the start of this round (before any ranking change
of the round, before batches 6 and 7 existed), kept away from the engineer changing the
ranking, and run for the first time after the round's last ranking change: its figure is
unseen (1k and 10k: precision 0.902, recall 0.949, 3/14 prompts with nothing stored got a
section). Labels fixed before that run. One prompt per memory of the set, in the set's
order, in the voice of a developer starting real work in the memory's area rather than
asking about the memory: a task that touches the same code ("add a refund event to the
Stripe handler"), the fix remembered instead of the problem ("did we add @Keep
somewhere?"), a half-remembered "we had something about ...", and a colleague's report
passed on. Prompts in a project's note language stay in it about half the time. Then 14
prompts with nothing stored: tasks in a memory's neighbourhood that no memory answers
(a new Tailwind plugin, a DAG's schedule, a Decimal formatting question, a tmux key
binding), small talk, and another project's topic.

Seen since: the next round read its misses (an identifier whose parts a memory writes
out, "Python operators" for PythonOperator, became a rule): 0.905/0.974 then, no longer
an unseen figure.
'''

from __future__ import annotations

# (project the session runs in, prompt, memories that should be shown)
HELDOUT_8: list[tuple[str, str, list[str]]] = [
    ("shop", "I'm adding pnpm to the release job as well, anything about installing in CI I should know first?", ["shop-lockfile"]),
    ("shop", "a colleague says our k8s liveness check talks to the database, is that on purpose?", ["shop-healthz"]),
    ("shop", "we had something about resizing product photos, do we still do it in the API?", ["shop-images"]),
    ("shop", "add a refund event to the stripe webhook handler", ["shop-stripe"]),
    ("shop", "my new hook starts its setInterval twice in dev mode", ["shop-polling"]),
    ("shop", "the playwright test for checkout failed again on main, 1 out of 5 runs", ["shop-s1"]),
    ("shop", "ProductCard looks unstyled after deploying, the classes are built with a template string", ["shop-s2"]),
    ("datapipe", "I want to rerun daily_sales for all of March, how many runs at once is safe?", ["dp-backfill"]),
    ("datapipe", "the bq load from the pandas parquet export is rejecting the created_at column", ["dp-parquet"]),
    ("datapipe", "new aggregation for the marketing mart: should I write it as a PythonOperator task?", ["dp-dbt"]),
    ("datapipe", "dedupe of customers by email takes ages, can we speed up the join?", ["dp-s1"]),
    ("datapipe", "升级 Airflow 之后调度器不跑任务了", ["dp-s2"]),
    ("billing", "compile error: the invoice builder's future cannot be sent between threads safely", ["bill-borrow"]),
    ("billing", "I'm adding a discount field to invoices, what type should the amount be?", ["bill-decimal"]),
    ("billing", "added a migration for the credit notes table, anything else to commit for sqlx?", ["bill-sqlx"]),
    ("billing", "a 300-page invoice PDF request returns a 504, did we hit this before?", ["bill-s1"]),
    ("infra", "state 文件又被两个并发的 apply 弄坏了，后端要怎么配？", ["infra-state"]),
    ("infra", "the Java service needs 40s to boot and the rollout keeps failing on readiness", ["infra-probe"]),
    ("infra", "新加一个 Ingress，证书要手动申请吗？", ["infra-cert"]),
    ("infra", "kubelet is evicting pods with DiskPressure on two nodes", ["infra-s1"]),
    ("infra", "somebody edited the security group by hand in the console, plan wants to revert it", ["infra-s2"]),
    ("jpapi", "新しいカラムを足すマイグレーション、デプロイと一緒に流していい？", ["jp-migrate"]),
    ("jpapi", "新しいハンドラを書いてる、DB クエリに渡す context はどれ？", ["jp-context"]),
    ("jpapi", "rate limiter never resets for some users, the redis key TTL looks wrong", ["jp-s1"]),
    ("jpapi", "テストが手元では通るのに CI だと時刻のところで落ちる", ["jp-s2"]),
    ("mobile", "did we add @Keep to the network models somewhere? release build parsing is broken again", ["mob-proguard"]),
    ("mobile", "GlobalScope 대신 뭘 써야 하죠? 새 화면 뷰모델 작성 중이에요", ["mob-coroutine"]),
    ("mobile", "notifications stopped arriving on Android 13 phones", ["mob-s1"]),
    ("billing", "where is my helix config file again?", ["mw-editor"]),
    ("jpapi", "SSH_AUTH_SOCK is stale inside my tmux session", ["mw-ssh"]),
    ("datapipe", "github shows my commits as unverified, how are we signing them?", ["mw-git"]),
    ("infra", "my laptop disk is full, docker is using 80 GB", ["mw-docker"]),
    ("shop", "deploy failed again, I suspect an env var typo like last time", ["shop-s3"]),
    ("shop", "after editing a price in the admin the product page shows the old price for a while", ["shop-cache"]),
    ("datapipe", "add a great_expectations check that amounts are positive after the load", ["dp-s3"]),
    ("billing", "tokio 1.38 renamed something in the runtime builder, what was it?", ["bill-s2"]),
    ("infra", "external-dns 没有给新的 Ingress 建 DNS 记录", ["infra-dns"]),
    ("jpapi", "ログを構造化したい、どのライブラリを使う決まりだっけ？", ["jp-logging"]),
    ("mobile", "how do we share the gradle build cache between CI runners?", ["mob-gradle"]),
    # nothing stored is about these
    ("shop", "add the @tailwindcss/typography plugin to the blog pages", []),
    ("datapipe", "change the daily_sales DAG to run at 6am instead of midnight", []),
    ("billing", "format a Decimal with two digits and a thousands separator", []),
    ("shop", "what's the tmux key binding to split a pane vertically?", []),
    ("infra", "帮我写一个 Terraform 模块来创建 S3 bucket", []),
    ("jpapi", "Go のジェネリクスの書き方を教えて", []),
    ("mobile", "Jetpack Compose에서 다크 모드를 지원하려면?", []),
    ("shop", "thanks, that worked! one more thing, can you rename the component?", []),
    ("datapipe", "explain what this regex does: ^[a-z]+@[a-z]+\\.com$", []),
    ("billing", "write a README section about how to run the tests", []),
    ("jpapi", "Postgres の VACUUM はいつ走らせるべき？", []),
    ("mobile", "remove the unused imports in MainActivity.kt", []),
    ("shop", "BigQuery rejects timestamps from pandas parquet", []),
    ("infra", "usePolling interval runs twice in development", []),
]

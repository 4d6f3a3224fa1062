'''Held-out batch 6 for bench_relevance.py, on the memories of relevance_set.py.

How it was built: written after the ranking changes measured on batch 5 and *before* any
run on these prompts, so that one figure stays unseen by the ranking; labels fixed before
its first run and not changed after. A method none of batches 1-5 used: the prompt is
not about the memory's problem but about work that the memory bears on, as a colleague
new to the project would open a session, the style assigned by memory position mod 4:

- 0, a goal: what they are about to do (add an install step to the deploy script, write
  a parquet export for BigQuery, set up a terraform backend), not a symptom;
- 1, a change under review: "PR: ..." describing a change the memory warns against or
  explains (lower initialDelaySeconds, store amounts as f64, run the migration in an init
  container, switch logging to zap);
- 2, another language: asked in a language other than the memory's (English memories in
  Japanese, Korean or Chinese in rotation; CJK memories in English or another CJK one);
- 3, a one-line chat message: what one would type into a team channel ("invoice pdf
  downloads time out for the big accounts again").

Then 19 prompts with nothing stored: near misses that name a memory's tool or object
(pnpm workspaces, parquet columns, Decimal formatting, cert-manager's chart, Redis INCR,
Gradle catalogs, tokio::spawn, Tailwind dark mode, terraform import) but ask what no
memory answers, requests about nothing stored in four languages, a greeting, and another
project's topic. `should` lists what a colleague who knew every memory would hand over.
'''

from __future__ import annotations

# (project the session runs in, prompt, memories that should be shown)
HELDOUT_6: list[tuple[str, str, list[str]]] = [
    ("shop", "adding a dependency install step to the deploy script, any gotchas with pnpm on the runner?", ["shop-lockfile"]),  # 0
    ("shop", "PR: make /healthz also ping Postgres so we notice when the DB is down", ["shop-healthz"]),  # 1
    ("shop", "商品画像って API でリサイズしてるんだっけ？それとも CDN？", ["shop-images"]),  # 2 (ja)
    ("shop", "stripe webhooks 400ing since the middleware refactor, known thing?", ["shop-stripe"]),  # 3
    ("shop", "I'm writing a new hook that polls /api/notifications every 10s, anything to watch out for in dev mode?", ["shop-polling"]),  # 0
    ("shop", "PR: replace waitForTimeout(2000) in the checkout spec with waiting for the order request", ["shop-s1"]),  # 1
    ("shop", "프로덕션 빌드에서 템플릿 문자열로 만든 Tailwind 클래스가 빠져요", ["shop-s2"]),  # 2 (ko)
    ("datapipe", "kicking off a backfill for all of 2025 on daily_sales, anything I should set first?", ["dp-backfill"]),  # 3
    ("datapipe", "I'm writing a new export to parquet that BigQuery will load, which options matter for the timestamp columns?", ["dp-parquet"]),  # 0
    ("datapipe", "PR: add a PythonOperator that runs the revenue rollup SQL directly from the DAG", ["dp-dbt"]),  # 1
    ("datapipe", "客户去重的任务又跑了四十分钟，之前是怎么优化的？", ["dp-s1"]),  # 2 (zh)
    ("datapipe", "after the airflow bump tasks just sit there, scheduler looks alive but does nothing", ["dp-s2"]),  # 3
    ("billing", "I'm adding an await on the tax service inside the invoice builder, will that break the Send bound?", ["bill-borrow"]),  # 0
    ("billing", "PR: store invoice amounts as f64 to simplify the serde code", ["bill-decimal"]),  # 1
    ("billing", "마이그레이션을 추가했더니 CI에서 sqlx 빌드가 깨져요", ["bill-sqlx"]),  # 2 (ko)
    ("billing", "invoice pdf downloads time out for the big accounts again", ["bill-s1"]),  # 3
    ("infra", "setting up a new terraform backend for the staging account, what do we use for locking?", ["infra-state"]),  # 0 (en)
    ("infra", "PR: lower initialDelaySeconds to 5 for faster rollouts of the java services", ["infra-probe"]),  # 1
    ("infra", "how do we renew the TLS certs on our ingresses, by hand?", ["infra-cert"]),  # 2 (en)
    ("infra", "节点又 DiskPressure 了，容器日志是不是又没轮转", ["infra-s1"]),  # 3
    ("infra", "I need to change a security group rule, should I do it in the console or in terraform?", ["infra-s2"]),  # 0
    ("jpapi", "PR: run the schema migration in an init container of the API pods", ["jp-migrate"]),  # 1 (en)
    ("jpapi", "핸들러에서 context.Background()를 쓰면 안 되는 이유가 뭐예요?", ["jp-context"]),  # 2 (ko)
    ("jpapi", "rate limiter never resets for some users, redis TTL looks weird", ["jp-s1"]),  # 3
    ("jpapi", "writing a test that checks the token expiry time, how do we deal with time in tests here?", ["jp-s2"]),  # 0
    ("mobile", "PR: enable minifyEnabled for release builds", ["mob-proguard"]),  # 1
    ("mobile", "which coroutine scope should a ViewModel use for loading data?", ["mob-coroutine"]),  # 2 (en)
    ("mobile", "android 13 users say they never get notifications", ["mob-s1"]),  # 3
    ("jpapi", "I want to change my editor's keybindings, where's the config file?", ["mw-editor"]),  # 0
    ("infra", "PR for dotfiles: point SSH_AUTH_SOCK at a stable socket in ~/.ssh/rc", ["mw-ssh"]),  # 1
    ("billing", "コミットに署名するにはどう設定する？", ["mw-git"]),  # 2 (ja)
    ("datapipe", "disk almost full again, is docker eating it?", ["mw-docker"]),  # 3
    ("shop", "I need to add a staging target to the deploy, where is DEPLOY_ENV read?", ["shop-s3"]),  # 0
    ("shop", "PR: drop revalidate on the product page and render it on every request", ["shop-cache"]),  # 1
    ("datapipe", "売上ロードの後に走るデータ品質チェックは何を見てる？", ["dp-s3"]),  # 2 (ja)
    ("billing", "tokio 1.38 upgrade notes anyone?", ["bill-s2"]),  # 3
    ("infra", "adding a new ingress for the admin app, what do I need so it gets a DNS name?", ["infra-dns"]),  # 0
    ("jpapi", "PR: switch logging to zap with console output", ["jp-logging"]),  # 1
    ("mobile", "how do we share the gradle build cache between CI runners?", ["mob-gradle"]),  # 2 (en)
    # near misses: a memory's tool or object, another question
    ("shop", "pnpm workspace: how do I run a script in every package?", []),
    ("datapipe", "pandas: read a parquet file with only two of its columns", []),
    ("billing", "rust_decimal: how do I format a Decimal with two decimals?", []),
    ("infra", "cert-manager 的 helm chart 怎么升级到最新版？", []),
    ("jpapi", "Redis の INCR はアトミック？", []),
    ("mobile", "Gradle version catalog 어떻게 써요?", []),
    ("billing", "tokio::spawn or spawn_blocking for a CPU-heavy loop?", []),
    ("shop", "tailwind dark mode: class strategy or media?", []),
    ("infra", "terraform import 的语法是什么", []),
    # nothing stored
    ("shop", "write a cypress test for the login form", []),
    ("datapipe", "add logging to the etl script", []),
    ("jpapi", "Go で JSON をパースする一番簡単な方法", []),
    ("mobile", "앱 아이콘 바꿔줘", []),
    ("infra", "帮我写一个 k8s CronJob 的 yaml", []),
    ("billing", "why is cargo build so slow on my laptop", []),
    ("shop", "good morning! what should we work on today?", []),
    ("mobile", "explain the difference between val and var", []),
    # another project's topic
    ("datapipe", "ProGuard strips my Retrofit models in release", []),
    ("jpapi", "pandas merge on email is slow", []),
]

"""The labelled set bench_relevance.py measures "Relevant to the first prompt" on.

How it was built (by hand, for this benchmark, before tuning the floor):

- Six projects a developer might keep on one machine, each with its own language and
  stack, and deliberately overlapping vocabulary (every project deploys, migrates, times
  out, has tests): `shop` (Next.js web app, own `.memory/` tree), `datapipe` (Python and
  Airflow, own tree), `billing` (Rust), `infra` (Terraform and Kubernetes, a Chinese
  team), `jpapi` (a Go API, Japanese notes), `mobile` (Kotlin, Korean notes); plus
  machine-wide memories (editor, shell, git). Projects without a tree keep their notes
  and extracted memories in the global tree with `project:` set, as memoryd writes them.
- Each memory is written as memoryd stores it: curated kinds (lesson, gotcha, decision,
  fact, rule) and session notes in the extractive note's shape, some quoting the prompt
  that started them.
- Each prompt is what a developer would type at the start of a session in that project,
  written without looking at the memory's title (paraphrases, other words, several
  languages, chatty filler, identifiers). `should` lists the memories a colleague would
  hand over for it; everything else counts as a wrong preview. Some prompts are about
  another project's topic (its memory must not show: scope), some about nothing stored
  (no section at all), some are all filler.
- Filler memories (up to 1k or 10k in all) are generated: made-up words with a sprinkle
  of generic developer words (build, test, error, config) and generic CJK words, spread
  over the six projects and machine-wide, so that single common words match many.
"""

from __future__ import annotations

# (id, project or "" for machine-wide, kind, title, body)
MEMORIES: list[tuple[str, str, str, str, str]] = [
    # shop: Next.js web app
    ("shop-lockfile", "shop", "lesson", "pnpm deploy needs the frozen lockfile",
     "The deploy broke because pnpm install rewrote pnpm-lock.yaml on the CI runner. Use pnpm install --frozen-lockfile in scripts/deploy.sh."),
    ("shop-healthz", "shop", "gotcha", "The /healthz route must not query Postgres",
     "Kubernetes killed the pods whenever Postgres was slow, because the liveness probe hit /healthz, which ran a query. Keep /healthz static; readiness checks the database."),
    ("shop-images", "shop", "decision", "Product images are served through the Next.js image loader with a CDN",
     "next/image with a custom loader pointing at the CDN; remotePatterns lists the bucket. Decided to stop resizing images in the API."),
    ("shop-stripe", "shop", "fact", "Stripe webhooks are verified with the raw request body",
     "The webhook handler needs the raw body (bodyParser off for /api/stripe/webhook); a parsed body breaks the signature check."),
    ("shop-polling", "shop", "gotcha", "usePolling fires twice in React strict mode",
     "In development React 18 strict mode mounts effects twice, so the usePolling hook started two intervals. Clear the interval in the effect cleanup."),
    ("shop-s1", "shop", "session", "Fix flaky checkout e2e test",
     "What Was Worked On: the Playwright checkout test failed one run in five. Outcome: the test waited for a fixed timeout; it now waits for the order confirmation request. Files: e2e/checkout.spec.ts"),
    ("shop-s2", "shop", "session", "Tailwind classes missing in production build",
     "Outcome: Tailwind purged classes built from template strings in ProductCard. Added them to the safelist in tailwind.config.js."),
    # datapipe: Python / Airflow
    ("dp-backfill", "datapipe", "lesson", "Airflow backfills must run with max_active_runs=1",
     "A backfill over a month started 30 DAG runs at once and exhausted the warehouse connection pool. Set max_active_runs=1 for the daily_sales DAG."),
    ("dp-parquet", "datapipe", "gotcha", "Parquet timestamps from pandas are nanoseconds, BigQuery wants microseconds",
     "Loading pandas-written parquet into BigQuery failed with 'invalid timestamp'. Write with coerce_timestamps='us'."),
    ("dp-dbt", "datapipe", "decision", "Transformations live in dbt models, not in Airflow Python operators",
     "SQL transformations moved to dbt; Airflow only triggers dbt run and tests. Easier review and lineage."),
    ("dp-s1", "datapipe", "session", "Slow pandas merge in the customer dedupe job",
     "What Was Worked On: the dedupe job took 40 minutes. Outcome: the merge on email strings was replaced by a merge on a hashed key column; it now takes 3 minutes."),
    ("dp-s2", "datapipe", "session", "Airflow scheduler stuck after upgrade",
     "Outcome: after upgrading Airflow to 2.9 the scheduler stopped picking tasks; the metadata database migration had not been run. airflow db migrate fixed it."),
    # billing: Rust
    ("bill-borrow", "billing", "lesson", "Clone invoice totals before awaiting in the invoice builder",
     "Holding a borrow of the totals across .await made the future not Send. Clone the totals (they are small) before the await."),
    ("bill-decimal", "billing", "decision", "Money is rust_decimal::Decimal, never f64",
     "Rounding errors in VAT sums came from f64. All amounts are Decimal with banker's rounding at the end."),
    ("bill-sqlx", "billing", "gotcha", "sqlx offline mode needs sqlx-data regenerated after a migration",
     "CI failed with 'no cached data for this query' after adding a migration. Run cargo sqlx prepare and commit .sqlx."),
    ("bill-s1", "billing", "session", "Invoice PDF rendering timeout",
     "Outcome: PDF rendering of large invoices hit the 30 s request timeout; rendering moved to a background job with a status endpoint."),
    # infra: Terraform / Kubernetes, Chinese notes
    ("infra-state", "infra", "lesson", "Terraform 状态锁要用 DynamoDB 表",
     "两个人同时 apply 把 state 文件写坏了。后端配置 dynamodb_table 做状态锁，之后再也没出现冲突。"),
    ("infra-probe", "infra", "gotcha", "就绪探针超时设置太短导致滚动发布失败",
     "Java 服务启动要 40 秒，readinessProbe 的 initialDelaySeconds 只有 10 秒，滚动发布一直失败。改成 startupProbe 给足启动时间。"),
    ("infra-cert", "infra", "decision", "证书统一由 cert-manager 签发和续期",
     "手动续期的证书过期过两次。决定所有 Ingress 证书由 cert-manager 和 Let's Encrypt 自动签发、续期。"),
    ("infra-s1", "infra", "session", "排查节点磁盘压力导致的 Pod 驱逐",
     "结果：节点上的容器日志没有轮转，磁盘满了以后 kubelet 开始驱逐 Pod。配置了日志轮转并清理了旧镜像。"),
    ("infra-s2", "infra", "session", "Terraform plan shows drift on the VPC",
     "Outcome: someone changed the security group in the console; imported the change into main.tf instead of reverting it."),
    # jpapi: Go API, Japanese notes
    ("jp-migrate", "jpapi", "lesson", "マイグレーションは本番デプロイの前に別ジョブで流す",
     "デプロイと同時にマイグレーションを実行したら、古いポッドが新しいスキーマで落ちた。マイグレーションは先に別ジョブで実行する。"),
    ("jp-context", "jpapi", "gotcha", "ハンドラでは r.Context() を使う、context.Background() は使わない",
     "クライアントが切断してもクエリが走り続けていた。ハンドラ内では必ず r.Context() を渡す。"),
    ("jp-s1", "jpapi", "session", "レート制限のバグ修正",
     "結果: レート制限のカウンタが Redis のキーの有効期限を毎回延長していたため、制限が解除されなかった。INCR の後に初回だけ EXPIRE を設定するように修正した。"),
    ("jp-s2", "jpapi", "session", "Go のテストが CI でだけ失敗する",
     "結果: テストが時刻に依存していて、CI のタイムゾーンが UTC だったため失敗した。時刻は注入するようにした。"),
    # mobile: Kotlin, Korean notes
    ("mob-proguard", "mobile", "gotcha", "릴리스 빌드에서 Retrofit 모델이 ProGuard에 의해 제거됨",
     "릴리스 빌드에서만 JSON 파싱이 실패했다. 모델 클래스에 @Keep을 붙이거나 proguard-rules.pro에 keep 규칙을 추가한다."),
    ("mob-coroutine", "mobile", "lesson", "뷰모델에서는 viewModelScope로 코루틴을 실행한다",
     "GlobalScope로 실행한 코루틴이 화면을 나간 뒤에도 계속 돌아 메모리 누수가 생겼다. viewModelScope를 사용한다."),
    ("mob-s1", "mobile", "session", "푸시 알림이 안드로이드 13에서 오지 않음",
     "결과: 안드로이드 13부터 POST_NOTIFICATIONS 런타임 권한이 필요하다. 권한 요청을 추가했다."),
    # machine-wide
    ("mw-editor", "", "fact", "The editor is Helix; hx opens files",
     "Use hx FILE. Config lives in ~/.config/helix/config.toml."),
    ("mw-ssh", "", "gotcha", "SSH agent forwarding breaks inside tmux after reattaching",
     "After reattaching tmux, SSH_AUTH_SOCK points at a dead socket. Link ~/.ssh/agent.sock in ~/.ssh/rc and point SSH_AUTH_SOCK at it."),
    ("mw-git", "", "decision", "Commits are signed with an SSH key",
     "git config gpg.format ssh and user.signingkey ~/.ssh/id_ed25519.pub; GitHub shows them verified."),
    ("mw-docker", "", "lesson", "Docker Desktop disk fills up: prune build cache monthly",
     "docker builder prune -a freed 60 GB. The build cache grows without limit."),
    # second batch: distractors that share words with the first batch, notes quoting prompts
    ("shop-s3", "shop", "session", "Why does the deploy keep failing",
     "What Was Worked On: the user asked why the deploy keeps failing. Outcome: a typo in the DEPLOY_ENV variable; fixed in .env.production."),
    ("shop-cache", "shop", "decision", "Product pages are cached for 60 seconds with ISR",
     "revalidate: 60 on the product page; on-demand revalidation from the admin when a price changes."),
    ("dp-s3", "datapipe", "session", "Add great_expectations checks to the sales load",
     "Outcome: expectations for non-null order ids and positive amounts run after each load; failures page the on-call."),
    ("bill-s2", "billing", "session", "Upgrade tokio to 1.38",
     "Outcome: tokio upgraded; the only change needed was a renamed runtime builder option."),
    ("infra-dns", "infra", "gotcha", "external-dns 只管理带注解的 Ingress",
     "新建的 Ingress 没有 external-dns.alpha.kubernetes.io/hostname 注解，DNS 记录一直没有创建。"),
    ("jp-logging", "jpapi", "decision", "ログは slog の JSON 形式で出力する",
     "構造化ログに統一するため、標準ライブラリの log/slog を JSON ハンドラで使う。"),
    ("mob-gradle", "mobile", "lesson", "Gradle 빌드 캐시를 CI에서 공유하면 빌드 시간이 절반으로 줄어든다",
     "원격 빌드 캐시를 켜고 CI 러너 간에 공유했더니 빌드 시간이 12분에서 6분으로 줄었다."),
]

# (project the session runs in, prompt, memories that should be shown)
PROMPTS: list[tuple[str, str, list[str]]] = [
    # shop
    ("shop", "The deploy script fails on the CI runner with ERR_PNPM_NO_LOCKFILE. Please fix scripts/deploy.sh", ["shop-lockfile"]),
    ("shop", "why does pnpm keep changing the lockfile during deploys?", ["shop-lockfile"]),
    ("shop", "Our pods get restarted every time the database is slow, can you look into the liveness probe?", ["shop-healthz"]),
    ("shop", "healthz endpoint is timing out again", ["shop-healthz"]),
    ("shop", "Stripe webhook signature verification fails in production", ["shop-stripe"]),
    ("shop", "I see two intervals running from usePolling in dev, why?", ["shop-polling"]),
    ("shop", "The checkout Playwright test is flaky again", ["shop-s1"]),
    ("shop", "Some Tailwind classes disappear in the production build of ProductCard", ["shop-s2"]),
    ("shop", "product images should come from the CDN, how is next/image configured?", ["shop-images"]),
    ("shop", "为什么部署的时候 pnpm lockfile 被改了？", ["shop-lockfile"]),
    # datapipe
    ("datapipe", "The backfill for daily_sales is eating all warehouse connections", ["dp-backfill"]),
    ("datapipe", "BigQuery load job says invalid timestamp for the parquet files from pandas", ["dp-parquet"]),
    ("datapipe", "Should this new transformation be an Airflow PythonOperator or a dbt model?", ["dp-dbt"]),
    ("datapipe", "the customer dedupe job is slow again, the merge takes forever", ["dp-s1"]),
    ("datapipe", "After the Airflow upgrade the scheduler is not scheduling any tasks", ["dp-s2"]),
    # billing
    ("billing", "future is not Send because of a borrow held across await in the invoice builder", ["bill-borrow"]),
    ("billing", "VAT totals are off by a cent, rounding problem?", ["bill-decimal"]),
    ("billing", "cargo build in CI fails: no cached data for this query (sqlx)", ["bill-sqlx"]),
    ("billing", "Large invoice PDFs time out, how did we handle that?", ["bill-s1"]),
    # infra (Chinese)
    ("infra", "两个人同时执行 terraform apply 会不会把状态写坏？", ["infra-state"]),
    ("infra", "滚动发布失败了，就绪探针一直不通过，服务启动很慢", ["infra-probe"]),
    ("infra", "Ingress 的证书又快过期了，怎么续期？", ["infra-cert"]),
    ("infra", "节点磁盘满了，Pod 被驱逐", ["infra-s1"]),
    ("infra", "terraform plan shows drift on the security group of the VPC", ["infra-s2"]),
    # jpapi (Japanese)
    ("jpapi", "本番デプロイでマイグレーションを同時に流しても大丈夫？", ["jp-migrate"]),
    ("jpapi", "クライアントが切断してもクエリが止まらない", ["jp-context"]),
    ("jpapi", "レート制限がずっと解除されないバグがまた出た", ["jp-s1"]),
    ("jpapi", "CI でだけテストが落ちる、タイムゾーンのせい？", ["jp-s2"]),
    # mobile (Korean)
    ("mobile", "릴리스 빌드에서만 JSON 파싱이 실패해요", ["mob-proguard"]),
    ("mobile", "화면을 나가도 코루틴이 계속 실행되는 메모리 누수", ["mob-coroutine"]),
    ("mobile", "안드로이드 13에서 푸시 알림이 안 와요", ["mob-s1"]),
    # machine-wide, asked from any project
    ("shop", "ssh agent forwarding stopped working after I reattached tmux", ["mw-ssh"]),
    ("billing", "docker is out of disk space again", ["mw-docker"]),
    ("jpapi", "how do I sign my git commits here?", ["mw-git"]),
    # another project's topic: its memories must not show (scope)
    ("shop", "future is not Send because a borrow is held across await", []),
    ("billing", "The Airflow backfill exhausts the connection pool", []),
    ("infra", "usePolling fires twice in strict mode", []),
    ("mobile", "BigQuery rejects parquet timestamps", []),
    # nothing stored is about these
    ("shop", "How do I center a div with flexbox?", []),
    ("datapipe", "Write a haiku about autumn", []),
    ("billing", "What is the difference between a process and a thread?", []),
    ("infra", "请帮我写一首关于春天的诗", []),
    ("jpapi", "今日はいい天気ですね", []),
    ("mobile", "오늘 점심 뭐 먹을까요?", []),
    ("shop", "Can you keep going? I think we were talking about it before", []),
    ("datapipe", "hi", []),
    ("shop", "Please update the README with the new install steps", []),
    ("billing", "add a unit test for the parser", []),
    # second batch, written after the first was measured: other wordings, longer prompts
    ("shop", "hey, quick one: every deploy keeps failing since this morning, the DEPLOY_ENV looks odd", ["shop-s3"]),
    ("shop", "Prices on the product page are stale for about a minute after I change them in the admin", ["shop-cache"]),
    ("shop", "we need to rotate the webhook secret for Stripe, where is the raw body handled again?", ["shop-stripe"]),
    ("shop", "Playwright checkout spec waits on a fixed timeout, make it wait for the confirmation instead", ["shop-s1"]),
    ("datapipe", "Can we add data quality checks for null order ids after the sales load?", ["dp-s3"]),
    ("datapipe", "the dbt run is failing on the orders model after I renamed a column", ["dp-dbt"]),
    ("datapipe", "coerce_timestamps for parquet, what did we set?", ["dp-parquet"]),
    ("billing", "bumping tokio again, anything to watch out for with the runtime builder?", ["bill-s2"]),
    ("billing", "Why do we use Decimal instead of floats for amounts?", ["bill-decimal"]),
    ("billing", "the invoice builder future does not implement Send", ["bill-borrow"]),
    ("infra", "新的 Ingress 的 DNS 记录一直没有生成", ["infra-dns"]),
    ("infra", "apply 的时候提示 state 被锁住了，锁是存在哪里的？", ["infra-state"]),
    ("infra", "cert-manager 续期失败了怎么排查", ["infra-cert"]),
    ("jpapi", "ログの出力形式は JSON にするんだっけ？", ["jp-logging"]),
    ("jpapi", "r.Context() と context.Background() のどちらを使うべき？", ["jp-context"]),
    ("mobile", "CI에서 Gradle 빌드가 너무 오래 걸려요", ["mob-gradle"]),
    ("mobile", "ProGuard 규칙 때문에 Retrofit 응답 파싱이 깨지는 것 같아요", ["mob-proguard"]),
    ("shop", "helix config: where does the editor keep its settings?", ["mw-editor"]),
    ("shop", "The deploy pipeline is slow, can we make it faster by caching node_modules?", []),
    ("billing", "Please refactor the CLI argument parsing into its own module", []),
    ("infra", "帮我看一下这个 Python 脚本为什么报错", []),
    ("jpapi", "このエラーメッセージの意味を教えてください", []),
    ("mobile", "이 함수 이름을 더 좋게 바꿔 주세요", []),
    ("datapipe", "let's keep going with what we were doing, I think it was almost done", []),
    ("shop", "Lockfile", ["shop-lockfile"]),
]

# Filler: generic words (shared by many memories, so they match a lot) and made-up ones.
GENERIC = (
    "build test error config server api update release fix log user service deploy database request "
    "response timeout version module handler client file cache job"
).split()
GENERIC_CJK = ("更新", "配置", "测试", "版本", "テスト", "設定", "更新", "설정", "테스트", "버전")
SYLLABLES = "ka to ri mu sen do la pe vo zi ran tek lor bu mi sha gon fer nix qua".split()

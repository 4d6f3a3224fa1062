'''Held-out batch 7 for bench_relevance.py, on the memories of relevance_set.py.

How it was built: written after every ranking change of this round and before any run on
these prompts, so that the round's last figure is an unseen one; labels fixed before the
first run and not changed after. Every memory gets one prompt, in the set's order
starting from its 21st memory (so styles fall on other memories than batches 3-6), the
style assigned by position mod 3:

- 0, a why/how question in the memory's own language about what the problem *did* to
  the user, in their words (the page was stale, the job ate the pool, the key did not
  work), not the memory's;
- 1, an alert or error one-liner as a monitoring tool or CI prints it (an alert name, a
  check's status line) with a short question;
- 2, a sentence in a language other than the memory's, or mixing two, in chat register.

Then 16 prompts with nothing stored: near misses naming a memory's tool or object with
another question, generic requests in four languages, a long friendly opener that asks
nothing stored, and another project's topic. `should`: what a colleague who knew every
memory would hand over.
'''

from __future__ import annotations

# (project the session runs in, prompt, memories that should be shown)
HELDOUT_7: list[tuple[str, str, list[str]]] = [
    ("infra", "为什么有人在控制台改了安全组以后 terraform plan 一直显示有变化？", ["infra-s2"]),  # 0 (memory 21)
    ("jpapi", "CI: deploy-api failed — old pods CrashLoopBackOff after migration step. 何が悪い？", ["jp-migrate"]),  # 1
    ("jpapi", "client disconnects but the query keeps going, is our handler using the wrong context?", ["jp-context"]),  # 2 (en)
    ("jpapi", "なぜ一部のユーザーだけ制限がずっと続いて 429 が返るの？", ["jp-s1"]),  # 0
    ("jpapi", "FAIL: TestTokenExpiry (0.00s) expected 10:00 got 01:00 — only on the CI runner", ["jp-s2"]),  # 1
    ("mobile", "release APK에서만 API 응답이 null 로 파싱돼요, debug 에서는 괜찮고", ["mob-proguard"]),  # 2
    ("mobile", "주문 화면을 나간 뒤에도 코루틴이 계속 돌아서 메모리가 새는 이유가 뭐예요?", ["mob-coroutine"]),  # 0
    ("mobile", "Play Console pre-launch report: notifications not shown on API 33 devices. what do we need?", ["mob-s1"]),  # 1
    ("shop", "ここのエディタって何使ってる？設定ファイルはどこ？", ["mw-editor"]),  # 2 (ja)
    ("billing", "why does my ssh key stop working every time I come back to my tmux session?", ["mw-ssh"]),  # 0
    ("infra", "GitHub: \"This commit is not signed\" on my PR, how are we supposed to sign?", ["mw-git"]),  # 1
    ("mobile", "도커가 디스크를 다 먹었어요, build cache 정리하는 법?", ["mw-docker"]),  # 2
    ("shop", "why did every deploy fail that morning, was it the env variable?", ["shop-s3"]),  # 0
    ("shop", "Sentry: price mismatch between admin and product page for ~60s after edits. expected?", ["shop-cache"]),  # 1
    ("datapipe", "sales load 끝나고 돌아가는 데이터 품질 체크가 on-call 을 깨웠어요, 뭘 검사하죠?", ["dp-s3"]),  # 2
    ("billing", "what broke in the runtime builder when we upgraded tokio last time?", ["bill-s2"]),  # 0
    ("infra", "Alert: DNSRecordMissing for admin.example.com (Ingress admin) — external-dns 没反应", ["infra-dns"]),  # 1
    ("jpapi", "what log format do we standardize on, JSON with slog?", ["jp-logging"]),  # 2 (en)
    ("mobile", "CI 에서 Gradle 빌드가 왜 매번 처음부터 다시 컴파일하죠? 캐시가 안 먹어요", ["mob-gradle"]),  # 0
    ("shop", "CI: ERR_PNPM_LOCKFILE_CONFIG_MISMATCH during scripts/deploy.sh — what's our fix?", ["shop-lockfile"]),  # 1
    ("shop", "Postgres 慢的时候 web pod 被 k8s 重启，是不是 liveness 探针的问题？", ["shop-healthz"]),  # 2
    ("shop", "why do some product photos come out in the wrong size, who resizes them?", ["shop-images"]),  # 0
    ("shop", "Stripe dashboard: webhook endpoint failing — 400 signature verification error", ["shop-stripe"]),  # 1
    ("shop", "dev 환경에서만 usePolling 타이머가 두 개 돌아요", ["shop-polling"]),  # 2
    ("shop", "why does the checkout e2e test go red one run in five?", ["shop-s1"]),  # 0
    ("shop", "Lighthouse/visual diff: ProductCard unstyled in production build only", ["shop-s2"]),  # 1
    ("datapipe", "backfill で DAG が一度に何十本も走ってコネクションが足りなくなる", ["dp-backfill"]),  # 2
    ("datapipe", "why did the BigQuery load reject the created_at column from our parquet files?", ["dp-parquet"]),  # 0
    ("datapipe", "Review bot: \"SQL transformation inside PythonOperator, move to the dbt project\" — is that our rule?", ["dp-dbt"]),  # 1
    ("datapipe", "客户 dedupe 那个 job 太慢了，merge 要四十分钟", ["dp-s1"]),  # 2
    ("datapipe", "why did the scheduler stop picking up tasks after we upgraded Airflow?", ["dp-s2"]),  # 0
    ("billing", "rustc: error: future cannot be sent between threads safely (invoice_builder.rs) — how did we fix it before?", ["bill-borrow"]),  # 1
    ("billing", "VAT の合計で端数がずれる、金額は何型で持ってる？", ["bill-decimal"]),  # 2
    ("billing", "why does CI say there is no cached data for a query right after I add a migration?", ["bill-sqlx"]),  # 0
    ("billing", "Grafana: p99 of GET /invoices/:id/pdf at 30s, 504s for large invoices", ["bill-s1"]),  # 1
    ("infra", "two people ran terraform apply at the same time and the state broke, how do we prevent it?", ["infra-state"]),  # 2 (en)
    ("infra", "为什么 Java 服务滚动发布的时候新 Pod 一直起不来？", ["infra-probe"]),  # 0
    ("infra", "Alert: CertificateExpiringSoon on ingress/shop-web (7 days). 手动续还是自动？", ["infra-cert"]),  # 1
    ("infra", "nodes running out of disk and pods getting evicted, logs not rotated?", ["infra-s1"]),  # 2 (en)
    # nothing stored: near misses
    ("shop", "pnpm: how do I patch a dependency with pnpm patch?", []),
    ("datapipe", "airflow: how do I set a DAG's timezone?", []),
    ("billing", "sqlx: how do I map a Postgres enum to a Rust enum?", []),
    ("infra", "Ingress 怎么配置 HTTP 跳转到 HTTPS？", []),
    ("jpapi", "slog で属性をグループ化する方法", []),
    ("mobile", "Kotlin 코루틴에서 Flow 와 LiveData 차이가 뭐예요?", []),
    ("shop", "how do I add a Stripe customer portal link?", []),
    ("billing", "docker compose: how do I add a Postgres service for local dev?", []),
    # nothing stored: generic
    ("datapipe", "write a function that flattens a nested dict", []),
    ("jpapi", "このコードをレビューしてください", []),
    ("mobile", "로그인 화면 디자인 좀 예쁘게 바꿔줘", []),
    ("infra", "帮我总结一下这个 PR 改了什么", []),
    ("billing", "Hi there! I just joined the team this week and I'm still finding my way around. "
                "Could you give me a quick tour of how this codebase is laid out?", []),
    ("shop", "translate the error messages to German", []),
    # another project's topic
    ("mobile", "the Airflow scheduler stopped after the upgrade", []),
    ("datapipe", "usePolling starts two intervals in strict mode", []),
]

'''Held-out batch 4 for bench_relevance.py, on the memories of relevance_set.py.

How it was built (written by an engineer who had not read the ranking code, before any
ranking change of this batch, labels fixed before its first run and not changed after):
the aim is how developers really open a session, not how a benchmark asks. Every memory
of the set gets exactly one prompt, in the set's order *reversed* (so the rotation falls
on other memories than batch 3's), and its style is assigned by position mod 3:

- 0, long paste: a rambling opener with what a developer pastes first, a stack trace,
  a compiler error, a log tail, `kubectl describe` events, a `terraform plan` diff, a
  Redis session, written as the real tool prints it (paths, line numbers, framework
  frames), with the memory's own words only where that tool's output would carry them;
- 1, terse command: a few imperative words as typed ("backfill daily_sales for May");
- 2, another language: asked in a language other than the memory's (an English memory
  asked in Chinese, Japanese or Korean in rotation, a Chinese memory in Japanese, a
  Japanese memory in Korean or English, a Korean memory in English).

Machine-wide memories are asked from a project in rotation. Then 20 prompts with nothing
stored, in the same three styles and in four languages: pasted traces of problems no
memory answers (some in a file or with a word a memory also holds: invoice, React,
pandas, lifecycle, Docker), terse commands, the session openers people type ("let's
continue where we left off", "explain what this repo does"), and another project's topic
asked in this project. A colleague who knew every memory fixed `should`.
'''

from __future__ import annotations

# (project the session runs in, prompt, memories that should be shown)
HELDOUT_4: list[tuple[str, str, list[str]]] = [
    ("mobile", "CI is super slow again on the android repo, every PR takes like 12 minutes just to assemble. here's the tail of the log:\n"
     "> Task :app:compileReleaseKotlin\n> Task :app:mergeReleaseResources\nBUILD SUCCESSFUL in 11m 48s\n187 actionable tasks: 187 executed\n"
     "nothing is UP-TO-DATE or FROM-CACHE, didn't we do something to speed this up before?", ["mob-gradle"]),  # 0
    ("jpapi", "slog で JSON ログ出して", ["jp-logging"]),  # 1
    ("infra", "new Ingress got created but no DNS record shows up in Route53, what's missing?", ["infra-dns"]),  # 2
    ("billing", "upgraded deps with cargo update and now the build is broken, no idea why:\n```\n"
     "error[E0599]: no method named `max_threads` found for struct `tokio::runtime::Builder` in the current scope\n"
     "  --> src/main.rs:14:10\n   |\n14 |         .max_threads(8)\n   |          ^^^^^^^^^^^ method not found in `&mut Builder`\n```\n"
     "I think we hit this last time we bumped tokio?", ["bill-s2"]),  # 0
    ("datapipe", "add data quality checks to the sales load", ["dp-s3"]),  # 1
    ("shop", "상품 가격을 바꿨는데 상품 페이지에 바로 반영이 안 돼요. 캐시가 몇 초로 되어 있죠?", ["shop-cache"]),  # 2 (ko)
    ("shop", "deploy failed again on CI. log:\n```\n$ ./scripts/deploy.sh\nLoading env from .env.production\n"
     "Error: Unknown environment 'prodution' (DEPLOY_ENV)\n    at resolveTarget (scripts/deploy/target.js:22:11)\n"
     "    at main (scripts/deploy/index.js:8:3)\nexit status 1\n```\nwhy does this keep failing?", ["shop-s3"]),  # 0
    ("datapipe", "free up docker disk space", ["mw-docker"]),  # 1
    ("infra", "git 提交怎么签名？用的是哪个密钥？", ["mw-git"]),  # 2 (zh)
    ("billing", "pushing to github from the devbox fails since this morning:\n```\n$ git push\n"
     "sign_and_send_pubkey: signing failed for ED25519 \"/home/me/.ssh/id_ed25519\" from agent: communication with agent failed\n"
     "git@github.com: Permission denied (publickey).\n$ echo $SSH_AUTH_SOCK\n/tmp/ssh-XXXXkq3/agent.1234\n```\n"
     "I'm in a tmux session I reattached after lunch, if that matters", ["mw-ssh"]),  # 0
    ("mobile", "open the helix config", ["mw-editor"]),  # 1
    ("mobile", "push notifications don't arrive on Android 13 phones, older versions are fine", ["mob-s1"]),  # 2 (en)
    ("mobile", "memory leak report from LeakCanary after leaving the order screen:\n```\n┬───\n│ GC Root: Thread object\n"
     "├─ kotlinx.coroutines.scheduling.CoroutineScheduler$Worker instance\n│    Leaking: UNKNOWN\n│    ↓ DispatchedContinuation.continuation\n"
     "├─ com.acme.app.orders.OrdersViewModel$load$1 instance\n│    ↓ OrdersViewModel$load$1.this$0\n╰→ com.acme.app.orders.OrdersFragment instance\n"
     "     Leaking: YES (Fragment#mFragmentManager is null)\n```\nload() is started with GlobalScope.launch in the ViewModel. 어떻게 고치죠?", ["mob-coroutine"]),  # 0
    ("mobile", "릴리스에서 JSON 파싱 깨짐 고쳐줘", ["mob-proguard"]),  # 1
    ("jpapi", "a Go test passes on my laptop but fails in CI, the expected time is off by 9 hours", ["jp-s2"]),  # 2 (en)
    ("jpapi", "本番で 429 が出っぱなしのユーザーがいる。Redis を見たら:\n```\n127.0.0.1:6379> GET ratelimit:user:8812\n\"143\"\n"
     "127.0.0.1:6379> TTL ratelimit:user:8812\n(integer) 3599\n127.0.0.1:6379> TTL ratelimit:user:8812\n(integer) 3600\n```\n"
     "TTL が毎回戻ってる気がする。前にも似たのあったよね？", ["jp-s1"]),  # 0
    ("jpapi", "ハンドラの context 直して", ["jp-context"]),  # 1
    ("jpapi", "배포할 때 마이그레이션을 같이 돌려도 되나요? 예전에 파드가 죽었던 것 같은데", ["jp-migrate"]),  # 2 (ko)
    ("infra", "terraform plan wants to change stuff nobody touched in code:\n```\n  # aws_security_group.web will be updated in-place\n"
     "  ~ resource \"aws_security_group\" \"web\" {\n        id   = \"sg-0a1b2c3d\"\n      ~ ingress = [\n          - {\n"
     "              - cidr_blocks = [\"10.0.0.0/8\"]\n              - from_port   = 8443\n            },\n        ]\n    }\n"
     "Plan: 0 to add, 1 to change, 0 to destroy.\n```\nshould I just apply and revert it?", ["infra-s2"]),  # 0
    ("infra", "Pod 被驱逐了，看下节点磁盘", ["infra-s1"]),  # 1
    ("infra", "Ingress の証明書の更新はどうやってる？手動？", ["infra-cert"]),  # 2 (ja)
    ("infra", "滚动更新卡住了，kubectl describe 出来是这样：\n```\nEvents:\n"
     "  Warning  Unhealthy  12s (x6 over 62s)  kubelet  Readiness probe failed: Get \"http://10.2.3.4:8080/actuator/health\": dial tcp 10.2.3.4:8080: connect: connection refused\n"
     "  Normal   Killing    5s                 kubelet  Container app failed liveness probe, will be restarted\n```\n"
     "这个 Java 服务本地启动要 40 秒左右", ["infra-probe"]),  # 0
    ("infra", "给 terraform 加状态锁", ["infra-state"]),  # 1
    ("billing", "大发票导出 PDF 超时了，之前是怎么处理的？", ["bill-s1"]),  # 2 (zh)
    ("billing", "CI broke after I merged the migration PR:\n```\n"
     "error: `SQLX_OFFLINE=true` but there is no cached data for this query, run `cargo sqlx prepare` to update the query cache or unset `SQLX_OFFLINE`\n"
     "  --> src/db/invoices.rs:41:17\n   |\n41 |     let row = sqlx::query_as!(Invoice, \"SELECT * FROM invoices WHERE id = $1\", id)\n```\n"
     "locally everything compiles", ["bill-sqlx"]),  # 0
    ("billing", "use Decimal for the VAT amounts", ["bill-decimal"]),  # 1
    ("billing", "請求書ビルダーの async 関数で「future cannot be sent between threads safely」と出る", ["bill-borrow"]),  # 2 (ja)
    ("datapipe", "after bumping the airflow image to 2.9.1 nothing gets scheduled, scheduler log keeps printing:\n```\n"
     "[2026-05-30T08:12:01.114+0000] {scheduler_job_runner.py:863} ERROR - Exception when executing SchedulerJob._run_scheduler_loop\n"
     "sqlalchemy.exc.ProgrammingError: (psycopg2.errors.UndefinedColumn) column dag_run.clear_number does not exist\n```\n"
     "tasks just sit in queued", ["dp-s2"]),  # 0
    ("datapipe", "speed up the customer dedupe merge", ["dp-s1"]),  # 1
    ("datapipe", "새 집계 로직을 Airflow PythonOperator로 짤까요, dbt 모델로 만들까요?", ["dp-dbt"]),  # 2 (ko)
    ("datapipe", "load job to BQ fails for yesterday's partition:\n```\n"
     "google.api_core.exceptions.BadRequest: 400 Error while reading data, error message: Invalid timestamp value 1717200000000000000 for field 'created_at' "
     "of type 'INT64' (logical type 'TIMESTAMP_NANOS'); in column 'created_at' File: gs://dp-exports/orders/2026-05-31.parquet\n```\n"
     "the file is written by df.to_parquet(path) in export_orders.py", ["dp-parquet"]),  # 0
    ("datapipe", "backfill daily_sales for May", ["dp-backfill"]),  # 1
    ("shop", "本番ビルドだけ Tailwind のクラスが消える、ProductCard のやつ", ["shop-s2"]),  # 2 (ja)
    ("shop", "checkout e2e went red on main again:\n```\n  1) [chromium] › e2e/checkout.spec.ts:42:5 › checkout › places an order\n"
     "    TimeoutError: locator.click: Timeout 5000ms exceeded.\n    =========================== logs ===========================\n"
     "    waiting for getByRole('button', { name: 'Place order' })\n    ============================================================\n"
     "      40 |   await page.waitForTimeout(2000);\n    > 42 |   await page.getByRole('button', { name: 'Place order' }).click();\n```\n"
     "passes on rerun. I thought we fixed this", ["shop-s1"]),  # 0
    ("shop", "fix usePolling double interval", ["shop-polling"]),  # 1
    ("shop", "Stripe 回调签名校验一直失败，是不是 body 被解析过了？", ["shop-stripe"]),  # 2 (zh)
    ("shop", "next build warns and the images 404 in preview:\n```\n"
     "Error: Invalid src prop (https://cdn.shop-assets.net/p/8812/main.jpg) on `next/image`, hostname \"cdn.shop-assets.net\" is not configured under images in your `next.config.js`\n"
     "See more info: https://nextjs.org/docs/messages/next-image-unconfigured-host\n"
     "    at defaultLoader (node_modules/next/dist/shared/lib/image-loader.js:41:19)\n```\n"
     "we moved product photos to the new bucket yesterday", ["shop-images"]),  # 0
    ("shop", "make /healthz not hit the db", ["shop-healthz"]),  # 1
    ("shop", "배포할 때 CI에서 pnpm이 lockfile을 자꾸 바꿔요", ["shop-lockfile"]),  # 2 (ko)
    # nothing stored: long pastes
    ("shop", "TypeError in the cart page after the refactor:\n```\nTypeError: Cannot read properties of undefined (reading 'map')\n"
     "    at CartItems (webpack-internal:///./components/CartItems.tsx:23:24)\n"
     "    at renderWithHooks (node_modules/react-dom/cjs/react-dom.development.js:16305:18)\n```\nitems comes from useCart(), can you help?", []),
    ("datapipe", "this script dies on a big CSV:\n```\nTraceback (most recent call last):\n  File \"scripts/load_csv.py\", line 18, in <module>\n"
     "    df = pd.read_csv(path)\n  File \".../pandas/io/parsers/readers.py\", line 912, in read_csv\n"
     "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9 in position 1043: invalid continuation byte\n```\n"
     "the file comes from the finance team's Excel export", []),
    ("billing", "clippy is unhappy:\n```\nwarning: this `if let` can be collapsed into the outer `match`\n  --> src/invoice/render.rs:88:13\n"
     "   |\n88 | /             if let Some(line) = item.line {\n```\nis it worth fixing or should I just allow it?", []),
    ("jpapi", "go vet で怒られた:\n```\n./internal/user/repo.go:57:2: loopclosure: loop variable u captured by func literal\n```\nGo 1.22 なら直ってるはずでは？", []),
    ("infra", "helm upgrade 报错：\n```\nError: UPGRADE FAILED: another operation (install/upgrade/rollback) is in progress\n```\n上一次 upgrade 被 Ctrl-C 打断了，现在怎么办？", []),
    ("mobile", "빌드가 갑자기 안 돼요:\n```\ne: file:///app/src/main/java/com/acme/ui/Login.kt:31:5 Unresolved reference: collectAsStateWithLifecycle\n```\n의존성 뭐 추가해야 하나요?", []),
    # nothing stored: terse commands
    ("shop", "run the unit tests", []),
    ("billing", "bump version to 0.4.2 and tag", []),
    ("datapipe", "add type hints to utils.py", []),
    ("jpapi", "README を英語に翻訳して", []),
    ("infra", "把这个 Dockerfile 改成多阶段构建", []),
    ("mobile", "다크 모드 추가해줘", []),
    # nothing stored: session openers, questions
    ("shop", "hey, let's continue where we left off yesterday", []),
    ("billing", "explain what this repo does", []),
    ("jpapi", "How do I write a table-driven test in Go?", []),
    ("infra", "kubectl 怎么切换默认 namespace？", []),
    ("mobile", "What's new in Kotlin 2.0?", []),
    ("datapipe", "このリポジトリの構成を説明して", []),
    # another project's topic
    ("jpapi", "Stripe webhook signature fails with a parsed body", []),
    ("mobile", "terraform state lock with dynamodb", []),
]

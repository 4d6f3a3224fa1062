'''Held-out batch 5 for bench_relevance.py, on the memories of relevance_set.py.

How it was built (labels fixed before its first run and not changed after; written before
any ranking change of this round): styles deliberately away from batches 1-4, the ways a
session is really opened that those batches have little of. Every memory of the set gets
exactly one prompt, in the set's order, the style assigned by position mod 6:

- 0, typo'd: one or two words mistyped as fingers do (pnmp, instal, accross, sing for
  sign), the rest as typed, lower case, no punctuation to speak of;
- 1, mixed-language: a sentence switching language mid-way, English identifiers and
  jargon inside Chinese, Japanese or Korean grammar, or the other way round;
- 2, very short: two to four words, the way people type into a chat box;
- 3, very long with a paste: a pasted `git diff`, a log or a logcat, with a question
  after it (the memory's words only where the tool's output would carry them);
- 4, symptom: what the user sees (a command not found, a page hit twice, CPU at 100 %,
  a query running on), whose memory names the cause;
- 5, synonyms: the memory's words replaced by the words a colleague would use instead
  (flaky → unreliable, stuck → frozen, reattach → reconnect, tokio → async runtime,
  rate limit → throttling).

Then eight more positives in synonym style (crash, crashloop, hang, queued, latency,
firewall, no space left), and 18 prompts with nothing stored: near misses that share a
memory's strongest title word (pnpm, Stripe, airflow, tokio, terraform, Redis, Retrofit,
tmux, git commits, docker) but ask something no memory answers, very short openers
("why is ci red", "lgtm merge it"), a crash no memory is about, a pasted diff to review,
CJK requests about nothing stored, and another project's topic asked in this project.
Machine-wide memories are asked from a project chosen in rotation. `should` lists what a
colleague who knew every memory would hand over.
'''

from __future__ import annotations

# (project the session runs in, prompt, memories that should be shown)
HELDOUT_5: list[tuple[str, str, list[str]]] = [
    ("shop", "pnmp install rewrites pnpm-lock.yaml on ci and the deploy is borken", ["shop-lockfile"]),  # 0
    ("shop", "liveness probe が DB を叩いてて、Postgres が遅いと pod が再起動される", ["shop-healthz"]),  # 1
    ("shop", "next/image cdn loader?", ["shop-images"]),  # 2
    ("shop", "I cleaned up the API config yesterday:\n```diff\ndiff --git a/pages/api/stripe/webhook.ts b/pages/api/stripe/webhook.ts\n"
     "index 3f2a1c9..8d0e4b7 100644\n--- a/pages/api/stripe/webhook.ts\n+++ b/pages/api/stripe/webhook.ts\n@@ -1,9 +1,5 @@\n"
     " import Stripe from 'stripe'\n-import { buffer } from 'micro'\n-\n-export const config = {\n-  api: { bodyParser: false },\n-}\n"
     "+import { withJson } from '../../../lib/middleware'\n \n export default async function handler(req, res) {\n"
     "-  const payload = await buffer(req)\n+  const payload = JSON.stringify(req.body)\n```\n"
     "and now every webhook from stripe fails with `No signatures found matching the expected signature for payload`. "
     "what did I break?", ["shop-stripe"]),  # 3
    ("shop", "running next dev, the orders page calls /api/orders twice on every tick, in prod only once. StrictMode?", ["shop-polling"]),  # 4
    ("shop", "the checkout end-to-end spec is unreliable, red one run, green the next", ["shop-s1"]),  # 5
    ("shop", "tailwnd classes gone in the prod build for ProductCard", ["shop-s2"]),  # 0
    ("datapipe", "backfill 跑一个月的数据的时候 warehouse 的 connection pool 被打满了", ["dp-backfill"]),  # 1
    ("datapipe", "BQ invalid timestamp", ["dp-parquet"]),  # 2
    ("datapipe", "reviewer pushed back on this part of my PR:\n```diff\n--- a/dags/daily_sales.py\n+++ b/dags/daily_sales.py\n"
     "@@ -40,6 +40,18 @@ with DAG(\"daily_sales\", schedule=\"@daily\") as dag:\n"
     "+    def build_region_totals(**context):\n+        hook = BigQueryHook()\n"
     "+        hook.run(\"\"\"\n+            INSERT INTO mart.region_totals\n+            SELECT region, sum(amount) FROM staging.orders GROUP BY region\n"
     "+        \"\"\")\n+\n+    region_totals = PythonOperator(task_id=\"region_totals\", python_callable=build_region_totals)\n"
     "+    load >> region_totals\n```\nthey say the SQL doesn't belong in the DAG. where are we supposed to put it?", ["dp-dbt"]),  # 3
    ("datapipe", "the dedupe step is the bottleneck of the nightly run, one core at 100% for most of an hour", ["dp-s1"]),  # 4
    ("datapipe", "since we moved to the new airflow release the scheduler seems frozen, nothing gets picked up", ["dp-s2"]),  # 5
    ("billing", "future is not Send bc a borrow is held accross .await in the invoice builder", ["bill-borrow"]),  # 0
    ("billing", "VAT の合計が 1 セントずれる、f64 のせい？", ["bill-decimal"]),  # 1
    ("billing", "sqlx prepare again?", ["bill-sqlx"]),  # 2
    ("billing", "support says big customers can't download invoices. gateway log:\n"
     "2026-05-30T09:14:22Z WARN upstream timed out (110: Connection timed out) while reading response header from upstream, "
     "request: \"GET /invoices/INV-20931/pdf HTTP/1.1\", upstream: \"http://10.0.3.7:8080/invoices/INV-20931/pdf\"\n"
     "2026-05-30T09:14:22Z 504 GET /invoices/INV-20931/pdf 30.001s\n"
     "that invoice has ~900 lines. small ones are fine. ideas?", ["bill-s1"]),  # 3
    ("infra", "our tfstate got corrupted after two pipelines applied at the same time", ["infra-state"]),  # 4
    ("infra", "rollout never finishes: the new java pods never turn Ready, the app needs about 40s to come up", ["infra-probe"]),  # 5
    ("infra", "certmanager renwal failing for the ingres certs", ["infra-cert"]),  # 0
    ("infra", "node 上 DiskPressure 了，好多 pods 被 evicted", ["infra-s1"]),  # 1
    ("infra", "terraform drift on the sg", ["infra-s2"]),  # 2
    ("jpapi", "rolled out v2.3 and the old pods started crashing mid-deploy:\n"
     "```\n2026/05/29 10:02:11 panic: pq: column \"display_name\" does not exist\n\ngoroutine 41 [running]:\n"
     "main.(*UserRepo).Get(0xc0001a2000, {0x9c4e20, 0xc0003b8f00}, 0x2a)\n\t/src/internal/user/repo.go:48 +0x2f1\n```\n"
     "the deploy job runs the migration and the rollout at the same time. 順番どうすべき？", ["jp-migrate"]),  # 3
    ("jpapi", "when a user closes the tab, the slow report query keeps running in postgres for minutes", ["jp-context"]),  # 4
    ("jpapi", "throttling never lifts for some users, they stay blocked with 429 forever", ["jp-s1"]),  # 5
    ("jpapi", "go tset fails only on ci, timezone?", ["jp-s2"]),  # 0
    ("mobile", "release 빌드에서만 Gson parsing 이 깨져요, R8 때문인가?", ["mob-proguard"]),  # 1
    ("mobile", "GlobalScope leak", ["mob-coroutine"]),  # 2
    ("mobile", "FCM messages arrive but nothing shows on the Pixel 7:\n```\n05-30 11:02:13.481  8812  8840 D FirebaseMessaging: onMessageReceived from=1234567\n"
     "05-30 11:02:13.502  8812  8840 D OrderPush: showing notification id=77 channel=orders\n"
     "05-30 11:02:13.507  1422  1530 W NotificationService: Suppressing notification from package com.acme.app by user request.\n```\n"
     "targetSdk is 33, the same build on an android 12 phone shows it fine", ["mob-s1"]),  # 3
    ("datapipe", "`code .` says command not found on this box, what do I edit with?", ["mw-editor"]),  # 4
    ("jpapi", "after I reconnect to my tmux session the ssh agent is unreachable, keys stop working", ["mw-ssh"]),  # 5
    ("mobile", "how do i sing my commits with the ssh key", ["mw-git"]),  # 0
    ("billing", "docker 磁盘又满了，build cache 怎么清理？", ["mw-docker"]),  # 1
    ("shop", "DEPLOY_ENV typo?", ["shop-s3"]),  # 2
    ("shop", "PM asks why price edits take so long to show up now. this is the only change on that page:\n```diff\n"
     "--- a/app/products/[slug]/page.tsx\n+++ b/app/products/[slug]/page.tsx\n@@ -1,4 +1,4 @@\n-export const revalidate = 60\n"
     "+export const revalidate = 3600\n```\ncan the admin trigger the refresh instead of us waiting it out?", ["shop-cache"]),  # 3
    ("datapipe", "who set up the thing that pages me at 3am when the sales load has bad rows?", ["dp-s3"]),  # 4
    ("billing", "bumping the async runtime to the latest minor, any gotchas from last time?", ["bill-s2"]),  # 5
    ("infra", "exteranl-dns not creating records for the new ingress", ["infra-dns"]),  # 0
    ("jpapi", "ログの format は JSON だっけ、text だっけ", ["jp-logging"]),  # 1
    ("mobile", "gradle ci slow", ["mob-gradle"]),  # 2
    # synonyms: crash, hang, latency, firewall, no space left
    ("shop", "web pods crashloop every time the database has latency spikes", ["shop-healthz"]),
    ("datapipe", "DAG runs sit in the queued state forever after upgrading airflow", ["dp-s2"]),
    ("infra", "somebody edited the firewall in the AWS console and now terraform wants to undo it", ["infra-s2"]),
    ("mobile", "the app crashes only in the release APK when it deserializes the API response", ["mob-proguard"]),
    ("infra", "pods keep crashlooping during the rollout because the health check kills them before the JVM is up", ["infra-probe"]),
    ("shop", "no space left on device when building docker images", ["mw-docker"]),
    ("billing", "the invoice PDF endpoint hangs and then 504s for our largest customers", ["bill-s1"]),
    ("jpapi", "Redis のキーの TTL がリクエストのたびに延びて、制限が解除されない", ["jp-s1"]),
    # near misses: a memory's strongest title word, another question
    ("shop", "pnpm why react: which package pulls in a second copy of react?", []),
    ("shop", "add a Stripe product and a monthly price for the pro plan", []),
    ("datapipe", "airflow: how do I pass params to a DAG run triggered from the UI?", []),
    ("billing", "what does tokio::select! do when both branches are ready?", []),
    ("infra", "terraform fmt 和 terraform validate 有什么区别", []),
    ("jpapi", "Redis の接続プールサイズはいくつがいい？", []),
    ("mobile", "Retrofit 로 파일 업로드 하는 방법", []),
    ("billing", "tmux copy mode: scroll with the mouse", []),
    ("infra", "git rebase -i to squash my last three commits", []),
    ("jpapi", "docker compose で環境変数を渡すには", []),
    # nothing stored: short openers, a crash nobody wrote about, a paste to review
    ("datapipe", "why is ci red", []),
    ("billing", "lgtm, merge it", []),
    ("datapipe", "segfault in the C extension when importing numpy", []),
    ("mobile", "continue", []),
    ("billing", "review this please:\n```diff\n--- a/src/invoice/total.rs\n+++ b/src/invoice/total.rs\n@@ -12,7 +12,7 @@\n"
     "-    let t = lines.iter().map(|l| l.net).sum();\n+    let net_total = lines.iter().map(|l| l.net).sum();\n```", []),
    ("infra", "帮我解释一下这段 SQL 是干什么的", []),
    # another project's topic
    ("billing", "pnpm keeps rewriting the lockfile on deploy", []),
    ("shop", "sqlx offline: no cached data for this query", []),
]

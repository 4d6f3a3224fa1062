"""Sessions where the user reports back: a fix that "wasn't enough", やっぱりダメです, 그래도 안 돼요,
a Chinese "其实是" correction, a session that ends in a bare "thanks!", markdown summaries with
headings, an English session that ends blocked. Written after the rules, in
yet another hand, to check that the rules follow the behaviour rather than the earlier phrases."""

from __future__ import annotations

from tests.capture.corpora import Scenario, text, tool
from tests.capture.corpus_scenarios import SRC, _bash, _edit, _read

THANKS = Scenario(
    "en-thanks-ending",
    "Fix flaky date test",
    f"{SRC}/cal",
    [
        ("test_parse_date fails on Mondays, please fix it.", [
            [_bash("pytest tests/test_dates.py",
                   "FAILED tests/test_dates.py::test_parse_date - ValueError: day is out of range for month")],
            [_edit(f"{SRC}/cal/cal/dates.py", "today.replace(day=today.day + 1)", "today + timedelta(days=1)")],
            [_bash("pytest tests/test_dates.py", "5 passed in 0.2s")],
            [text("parse_date now adds a timedelta(days=1) instead of replacing the day, so month ends no longer "
                  "raise ValueError; tests/test_dates.py passes.")],
        ]),
        ("thanks!", [[text("You're welcome! Let me know if anything else comes up.")]]),
    ],
    facts=["timedelta(days=1)", "ValueError", "cal/dates.py"],
    absent=["You're welcome"],
)

NOT_ENOUGH = Scenario(
    "en-index-not-enough",
    "Slow report query",
    f"{SRC}/rep",
    [
        ("The monthly report query takes 40 s. Make it faster.", [
            [_bash("psql -c 'EXPLAIN ANALYZE SELECT ...'",
                   "Seq Scan on orders  (cost=0.00..98234.00 rows=2000000)\nExecution Time: 40123.2 ms")],
            [text("Added an index on orders(created_at); that should make the report fast."),
             _edit(f"{SRC}/rep/migrations/0042_idx.sql", "", "CREATE INDEX orders_created_at ON orders(created_at);")],
            [_bash("psql -c 'EXPLAIN ANALYZE SELECT ...'",
                   "Seq Scan on orders  (cost=0.00..98234.00 rows=2000000)\nExecution Time: 39876.0 ms")],
            [text("That wasn't enough: the planner still does a seq scan, because the query filters on "
                  "date_trunc('month', created_at), which the index can't serve.")],
            [_edit(f"{SRC}/rep/report.sql", "WHERE date_trunc('month', created_at) = $1",
                   "WHERE created_at >= $1 AND created_at < $1 + interval '1 month'")],
            [_bash("psql -c 'EXPLAIN ANALYZE SELECT ...'",
                   "Index Scan using orders_created_at on orders\nExecution Time: 212.4 ms")],
            [text("The report query runs in 212 ms now: report.sql compares created_at to a month range, so the "
                  "orders_created_at index is used.")],
        ]),
    ],
    facts=["orders_created_at", "212 ms", "date_trunc", "report.sql"],
    absent=["Seq Scan on orders"],
    superseded=["that should make the report fast"],
)

JA_BLANK = Scenario(
    "ja-login-blank",
    "ログイン画面が真っ白",
    f"{SRC}/front",
    [
        ("ログイン画面が真っ白になります。直してください。", [
            [_bash("npm run build", "ERROR in ./src/Login.tsx 12:4\nModule not found: Error: Can't resolve './api/auth'")],
            [_edit(f"{SRC}/front/src/Login.tsx", "from './api/auth'", "from './services/auth'")],
            [text("src/Login.tsx の import を ./services/auth に直しました。ビルドも通りました。")],
        ]),
        ("やっぱりダメです。まだ真っ白で、コンソールに TypeError: Cannot read properties of undefined (reading "
         "'token') が出ます。", [
            [_read(f"{SRC}/front/src/services/auth.ts", "export const session = window.__SESSION__;")],
            [text("原因が分かりました。window.__SESSION__ は SSR のときしか定義されておらず、クライアントだけで開くと "
                  "undefined になります。")],
            [_edit(f"{SRC}/front/src/services/auth.ts", "window.__SESSION__;", "window.__SESSION__ ?? { token: null };")],
            [text("services/auth.ts で window.__SESSION__ が無いときは { token: null } を使うようにしたので、"
                  "ログイン画面が表示されるようになりました。")],
        ]),
    ],
    facts=["window.__SESSION__", "services/auth.ts", "TypeError"],
    superseded=["import を ./services/auth に直しました"],
)

KO_DEPLOY = Scenario(
    "ko-deploy-permission",
    "배포 스크립트 권한 오류",
    f"{SRC}/ops",
    [
        ("deploy.sh 실행하면 Permission denied 가 납니다.", [
            [_bash("./deploy.sh", "bash: ./deploy.sh: Permission denied")],
            [_bash("chmod +x deploy.sh", "")],
            [text("deploy.sh에 실행 권한을 줬습니다. 이제 실행됩니다.")],
        ]),
        ("그래도 안 돼요. 이번에도 scp: /srv/app/releases: Permission denied 가 나요.", [
            [_bash("ssh deploy@web1 'ls -ld /srv/app/releases'", "drwxr-xr-x 2 root root 4096 Nov 30 /srv/app/releases")],
            [text("원인은 /srv/app/releases 의 소유자가 root라서 deploy 사용자가 쓸 수 없다는 것입니다.")],
            [text("제 계정에는 sudo 권한이 없어서 소유자를 바꿀 수 없습니다. 배포는 아직 안 됐고, 서버 관리자가 "
                  "chown deploy /srv/app/releases 를 해 줘야 합니다.")],
        ]),
    ],
    facts=["/srv/app/releases", "chown deploy", "root"],
    superseded=["이제 실행됩니다"],
)

ZH_CSRF = Scenario(
    "zh-csrf-403",
    "接口返回 403",
    f"{SRC}/gw",
    [
        ("调用 /api/orders 一直返回 403，帮我看看。", [
            [_bash("curl -i localhost:8080/api/orders", "HTTP/1.1 403 Forbidden\n{\"error\":\"csrf token missing\"}")],
            [text("应该是 CORS 配置的问题，我在 gateway.yaml 里加了 allowedOrigins。"),
             _edit(f"{SRC}/gw/gateway.yaml", "cors: {}", "cors: {allowedOrigins: ['*']}")],
            [_bash("curl -i localhost:8080/api/orders", "HTTP/1.1 403 Forbidden\n{\"error\":\"csrf token missing\"}")],
            [text("没解决，还是 403。其实是 CSRF 校验拦住了：响应里写着 csrf token missing，跟 CORS 无关，"
                  "我把 gateway.yaml 改回去了。")],
            [_edit(f"{SRC}/gw/gateway.yaml", "csrf: {enabled: true}", "csrf: {enabled: true, ignore: ['/api/**']}")],
            [_bash("curl -i localhost:8080/api/orders", "HTTP/1.1 200 OK")],
            [text("现在 /api/orders 返回 200：gateway.yaml 里对 /api/** 关闭了 CSRF 校验，API 走的是 token 认证，"
                  "不需要 CSRF。")],
        ]),
    ],
    facts=["csrf token missing", "gateway.yaml", "/api/**", "其实是 CSRF"],
    superseded=["CORS 配置的问题", "加了 allowedOrigins"],
)

LEAK = Scenario(
    "en-leak-markdown",
    "Memory leak in image worker",
    f"{SRC}/img",
    [
        ("The image worker's RSS grows by ~50 MB per hour until it gets OOM-killed. Can you find the leak?", [
            [tool("todowrite", {"todos": [{"content": "Profile", "status": "pending"}]}, "ok")],
            [_bash("python -m memray run -o out.bin worker.py --iterations 500 && python -m memray stats out.bin",
                   "Total allocations: 1203384\nTop allocator: PIL/Image.py:3180 open 412.3MB\n"
                   "Top allocator: worker/cache.py:22 put 388.1MB")],
            [text("My first guess is PIL not closing images. I'll wrap `Image.open` in a context manager.")],
            [_edit(f"{SRC}/img/worker/resize.py", "img = Image.open(path)", "with Image.open(path) as img:")],
            [_bash("python -m memray run -o out2.bin worker.py --iterations 500 && python -m memray stats out2.bin",
                   "Total allocations: 1201127\nTop allocator: worker/cache.py:22 put 391.0MB")],
            [text("Closing the images helped a little but RSS still grows at the same rate, so PIL was not the main "
                  "leak.\n\nLooking at `worker/cache.py` next.")],
            [_read(f"{SRC}/img/worker/cache.py", "_CACHE = {}\ndef put(key, value):\n    _CACHE[key] = value")],
            [text("Found it: `worker/cache.py` keeps every thumbnail in a module-level dict `_CACHE` that is never "
                  "evicted.")],
            [_edit(f"{SRC}/img/worker/cache.py", "_CACHE = {}", "_CACHE = LRUCache(maxsize=256)")],
            [_bash("python -m memray run -o out3.bin worker.py --iterations 5000 && python -m memray stats out3.bin",
                   "Total allocations: 1190003\nPeak memory usage: 143.2MB")],
            [text("## Summary\n\nThe leak is fixed.\n\n**Root cause:** `worker/cache.py` stored every thumbnail in "
                  "an unbounded module-level dict.\n\n**Changes:**\n- `worker/cache.py`: `_CACHE` is now an "
                  "`LRUCache(maxsize=256)` from cachetools.\n- `worker/resize.py`: images are opened in a `with` "
                  "block (minor, kept).\n\n**Verification:** 5,000 iterations under memray peak at 143 MB and stay "
                  "flat.")],
        ]),
    ],
    facts=["worker/cache.py", "LRUCache(maxsize=256)", "143 MB", "_CACHE"],
    absent=["Top allocator: PIL/Image.py", "## Summary"],
)

VPN = Scenario(
    "en-vpn-blocked",
    "Connect to staging DB",
    f"{SRC}/api",
    [
        ("Run the migration 0043 against staging, the DSN is in .env.staging.", [
            [_bash("alembic -x env=staging upgrade 0043",
                   "sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) could not connect to server: "
                   "Connection timed out\n\tIs the server running on host \"10.20.0.5\" and accepting TCP/IP "
                   "connections on port 5432?")],
            [text("The connection times out. I'll check whether the host is reachable.")],
            [_bash("nc -vz -w 3 10.20.0.5 5432",
                   "nc: connect to 10.20.0.5 port 5432 (tcp) timed out: Operation now in progress")],
            [text("I switched the DSN to the staging bastion's tunnel port and retried; that should work now."),
             _edit(f"{SRC}/api/.env.staging", "@10.20.0.5:5432", "@127.0.0.1:15432")],
            [_bash("alembic -x env=staging upgrade 0043", "sqlalchemy.exc.OperationalError: connection to server at "
                   "\"127.0.0.1\", port 15432 failed: Connection refused")],
            [text("Hmm, no luck — there is no tunnel listening on 15432 either. I put the DSN back to 10.20.0.5.")],
            [_edit(f"{SRC}/api/.env.staging", "@127.0.0.1:15432", "@10.20.0.5:5432")],
            [text("I couldn't run the migration: staging's database at 10.20.0.5:5432 is only reachable over the "
                  "corporate VPN, which this machine is not connected to. Migration 0043 is **not** applied. Once "
                  "you are on the VPN, run `alembic -x env=staging upgrade 0043`.")],
        ]),
    ],
    facts=["10.20.0.5", "VPN", "0043 is not applied", "OperationalError"],
    superseded=["that should work now", "switched the DSN to the staging bastion"],
)

JA_ORDER = Scenario(
    "ja-docker-order",
    "CI の Docker ビルド失敗",
    f"{SRC}/svc",
    [
        ("CI の docker build が `COPY failed` で落ちます。", [
            [_bash("docker build -t svc .", "Step 5/9 : COPY dist/ /app/\nCOPY failed: file not found in build "
                   "context or excluded by .dockerignore: stat dist/: file does not exist")],
            [text("`.dockerignore` に `dist` が入っているのが原因だと思います。外しました。"),
             _edit(f"{SRC}/svc/.dockerignore", "dist\n", "")],
            [_bash("docker build -t svc .", "COPY failed: file not found in build context or excluded by "
                   ".dockerignore: stat dist/: file does not exist")],
            [text("まだ同じエラーです。.dockerignore の変更は元に戻しました。"),
             _edit(f"{SRC}/svc/.dockerignore", "", "dist\n")],
            [_read(f"{SRC}/svc/.github/workflows/ci.yml", "- run: docker build -t svc .\n- run: npm run build")],
            [text("判明しました：CI では `npm run build` が docker build の **後** に走っているので、ビルド時に "
                  "dist/ がまだありません。")],
            [_edit(f"{SRC}/svc/.github/workflows/ci.yml", "- run: docker build -t svc .\n- run: npm run build",
                   "- run: npm run build\n- run: docker build -t svc .")],
            [text("## 対応内容\n\n- `.github/workflows/ci.yml` で `npm run build` を `docker build` の前に移動しまし"
                  "た。\n- `.dockerignore` は元のままです。\n\nこれで CI の docker build が通るはずです。")],
        ]),
    ],
    facts=["ci.yml", "npm run build", "COPY failed", "dist/"],
    absent=["対応内容"],
    superseded=["`.dockerignore` に `dist` が入っているのが原因"],
)

ZH_BEAT = Scenario(
    "zh-beat-twice",
    "定时任务重复执行",
    f"{SRC}/sched",
    [
        ("celery beat 的定时任务每次都执行两遍，帮我查一下。", [
            [_read(f"{SRC}/sched/docker-compose.yml",
                   "worker:\n  command: celery -A app worker -B\nbeat:\n  command: celery -A app beat")],
            [text("原因是 worker 用了 -B 参数，又单独起了一个 beat 容器，所以有两个调度器。我去掉了 worker 的 -B。"),
             _edit(f"{SRC}/sched/docker-compose.yml", "celery -A app worker -B", "celery -A app worker")],
            [text("已修改 docker-compose.yml：worker 不再带 -B，只保留独立的 beat 服务，任务应该只执行一次了。")],
        ]),
        ("还是执行了两遍，日志如下：\n```\n[2026-11-30 10:00:00,003: INFO/MainProcess] Scheduler: Sending due task "
         "report (app.tasks.report)\n[2026-11-30 10:00:00,011: INFO/MainProcess] Scheduler: Sending due task report "
         "(app.tasks.report)\n```\n生产环境是用 k8s 部署的，不是 docker compose，你看一下 k8s 的配置。", [
            [_bash("kubectl get deploy -n jobs -o custom-columns=NAME:.metadata.name,REPLICAS:.spec.replicas",
                   "NAME     REPLICAS\nbeat     2\nworker   4")],
            [text("找到了：k8s 里 beat 的 Deployment 有 2 个副本，两个调度器各发一次任务。")],
            [_edit(f"{SRC}/sched/k8s/beat.yaml", "replicas: 2", "replicas: 1")],
            [_bash("kubectl apply -f k8s/beat.yaml && kubectl get deploy beat -n jobs",
                   "deployment.apps/beat configured\nNAME   READY\nbeat   1/1")],
            [text("k8s/beat.yaml 的 replicas 已改为 1 并已应用，现在只有一个 beat 调度器，10:30 的任务只发送了一次。")],
        ]),
    ],
    facts=["replicas", "k8s/beat.yaml", "-B", "2 个副本", "还是执行了两遍", "生产环境是用 k8s 部署的"],
    absent=["INFO/MainProcess"],
    superseded=["任务应该只执行一次了"],
)

JA_CERT = Scenario(
    "ja-cert-blocked",
    "本番の証明書エラー",
    f"{SRC}/infra",
    [
        ("本番の api.example.jp で証明書エラーが出ています。原因を調べて直してください。", [
            [_bash("openssl s_client -connect api.example.jp:443 -servername api.example.jp </dev/null 2>&1 | grep -i "
                   "verify", "verify error:num=20:unable to get local issuer certificate\nVerify return code: 21 "
                   "(unable to verify the first certificate)")],
            [text("中間証明書がチェーンに入っていないのが原因です。nginx の ssl_certificate を fullchain.pem に変えました。"),
             _edit(f"{SRC}/infra/nginx/api.conf", "ssl_certificate /etc/ssl/api/cert.pem;",
                   "ssl_certificate /etc/ssl/api/fullchain.pem;")],
            [_bash("sudo nginx -t", "nginx: [emerg] cannot load certificate \"/etc/ssl/api/fullchain.pem\": "
                   "BIO_new_file() failed (SSL: error:80000002:system library::No such file or directory)")],
            [text("fullchain.pem がサーバーに存在しないので、この変更は元に戻しました。"),
             _edit(f"{SRC}/infra/nginx/api.conf", "ssl_certificate /etc/ssl/api/fullchain.pem;",
                   "ssl_certificate /etc/ssl/api/cert.pem;")],
            [text("まだ解決していません。中間証明書のファイルは証明書の発行元ポータルからしかダウンロードできず、私には"
                  "そのアカウントがありません。インフラ担当の方に中間証明書を取得してもらい、cert.pem と結合した "
                  "fullchain.pem を /etc/ssl/api/ に置く必要があります。")],
        ]),
    ],
    facts=["unable to get local issuer certificate", "fullchain.pem", "まだ解決していません", "中間証明書"],
    superseded=["ssl_certificate を fullchain.pem に変えました"],
)

KO_LINK = Scenario(
    "ko-link-crt-static",
    "링커 오류",
    f"{SRC}/native",
    [
        ("cargo build --release 하면 링크 단계에서 실패합니다.", [
            [_bash("cargo build --release", "   Compiling native v0.3.0\nerror: linking with `cc` failed: exit status: "
                   "1\n  |\n  = note: /usr/bin/ld: cannot find -lssl: No such file or directory\n          collect2: "
                   "error: ld returned 1 exit status\n\nerror: could not compile `native` (bin \"native\") due to 1 "
                   "previous error")],
            [text("libssl-dev가 없어서 그런 것 같습니다. 설치했습니다."),
             _bash("sudo apt-get install -y libssl-dev", "libssl-dev is already the newest version (3.0.2-0ubuntu1.18).")],
            [text("libssl-dev는 이미 최신 버전이라 효과가 없었습니다.")],
            [_bash("echo $RUSTFLAGS; cat .cargo/config.toml",
                   "-C target-feature=+crt-static\n[build]\nrustflags = [\"-C\", \"target-feature=+crt-static\"]")],
            [text("원인은 .cargo/config.toml의 +crt-static 설정입니다: 정적 링크를 강제해서 libssl.a를 찾는데 시스템에는 "
                  "공유 라이브러리만 있습니다.")],
            [_edit(f"{SRC}/native/.cargo/config.toml", "rustflags = [\"-C\", \"target-feature=+crt-static\"]", "")],
            [_bash("cargo build --release", "    Finished release [optimized] target(s) in 41.2s")],
            [text(".cargo/config.toml에서 +crt-static을 빼서 cargo build --release가 성공합니다. 정적 바이너리가 필요하면 "
                  "openssl 크레이트의 vendored 기능을 써야 합니다.")],
        ]),
    ],
    facts=["cannot find -lssl", "+crt-static", ".cargo/config.toml", "vendored"],
    superseded=["libssl-dev가 없어서"],
)

REPLIES = [THANKS, NOT_ENOUGH, JA_BLANK, KO_DEPLOY, ZH_CSRF, LEAK, VPN, JA_ORDER, ZH_BEAT, JA_CERT, KO_LINK]

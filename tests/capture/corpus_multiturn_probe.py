"""A second set of multi-turn sessions, written after the rules with other wordings, to check that
the rules follow the behaviour (a withdrawn guess, a fix reported broken, a blocked ending)
rather than the first corpora's phrases."""

from __future__ import annotations

from tests.capture.corpora import Scenario, text
from tests.capture.corpus_scenarios import SRC, _bash, _edit, _read

API = f"{SRC}/authsvc"
PYTEST_FAIL = """============================= test session starts ==============================
collected 14 items

tests/test_auth.py ......F.......                                        [100%]

=================================== FAILURES ===================================
________________________________ test_login ____________________________________
    def test_login(client):
        resp = client.post("/login", json={"user": "ana", "password": "pw"})
>       assert resp.status_code == 200
E       assert 500 == 200
--------------------------- Captured log call ----------------------------------
ERROR    authsvc.app:app.py:88 Exception on /login [POST]
werkzeug.exceptions.RequestHeaderFieldsTooLarge: 431 Request Header Fields Too Large
=========================== short test summary info ============================
FAILED tests/test_auth.py::test_login - assert 500 == 200
========================= 1 failed, 13 passed in 1.92s ========================="""

EN_LOGIN = Scenario(
    "en-login-cookie",
    "Login returns 500",
    API,
    [
        (
            "POST /login returns a 500 since this morning's deploy. Please find out why and fix it.",
            [
                [_bash("pytest tests/test_auth.py -q", PYTEST_FAIL)],
                [text("I think the issue is that SECRET_KEY is missing from the environment, so sessions cannot be "
                      "signed."), _read(f"{API}/authsvc/config.py", "SECRET_KEY = os.environ.get('SECRET_KEY')")],
                [_edit(f"{API}/authsvc/config.py", "os.environ.get('SECRET_KEY')", "os.environ['SECRET_KEY']")],
                [text("Made SECRET_KEY mandatory in authsvc/config.py so a missing key fails at start-up.")],
                [_bash("SECRET_KEY=dev pytest tests/test_auth.py -q", PYTEST_FAIL)],
                [text("Nope — still getting the 500 on /login with the key set, so that was a wrong guess.")],
                [_read(f"{API}/authsvc/session.py", "session['profile'] = user.to_dict()  # whole profile in the cookie")],
                [text("The culprit is the session cookie: session.py stores the whole user profile in it, the cookie "
                      "grew past 4 KB after the avatar field was added, and werkzeug rejects the request with "
                      "RequestHeaderFieldsTooLarge.")],
                [_edit(f"{API}/authsvc/session.py", "session['profile'] = user.to_dict()", "session['user_id'] = user.id")],
                [_bash("SECRET_KEY=dev pytest tests/test_auth.py -q", "14 passed in 1.71s")],
                [text("Fixed: the session now keeps only user_id and the profile is loaded per request, so the cookie "
                      "stays under 200 bytes; all 14 tests in tests/test_auth.py pass.")],
            ],
        ),
        (
            "Great. Add a regression test so the cookie can't grow like that again.",
            [
                [_edit(f"{API}/tests/test_auth.py", "def test_login(client):",
                       "def test_login_cookie_is_small(client):\n    ...\n\ndef test_login(client):")],
                [_bash("SECRET_KEY=dev pytest tests/test_auth.py -q", "15 passed in 1.80s")],
                [text("Added test_login_cookie_is_small to tests/test_auth.py: it logs in and asserts the Set-Cookie "
                      "header stays under 1024 bytes; 15 tests pass.")],
            ],
        ),
    ],
    facts=["authsvc/session.py", "RequestHeaderFieldsTooLarge", "user_id", "test_login_cookie_is_small",
           "pytest tests/test_auth.py -q", "4 KB"],
    absent=["collected 14 items", "def test_login(client):"],
    superseded=["SECRET_KEY is missing from the environment", "Made SECRET_KEY mandatory"],
)

ZH_GO = Scenario(
    "zh-go-grpc",
    "go build 失败",
    f"{SRC}/orders",
    [
        (
            "go build ./... 报 undefined: grpc.WithInsecure，帮我修一下。",
            [
                [_bash("go build ./...", "# orders/internal/client\ninternal/client/conn.go:18:22: undefined: grpc.WithInsecure")],
                [text("应该是 grpc 版本太新导致的，我把 google.golang.org/grpc 降到 v1.50.0。")],
                [_bash("go get google.golang.org/grpc@v1.50.0 && go build ./...",
                       "internal/client/conn.go:18:22: undefined: grpc.WithInsecure")],
                [text("降级以后还是报同样的错，看来不是版本的问题。")],
                [_bash("grep -rn 'google.golang.org/grpc' go.mod vendor/modules.txt",
                       "go.mod:9: google.golang.org/grpc v1.50.0\nvendor/modules.txt:41: # google.golang.org/grpc v1.62.1")],
                [text("问题出在 vendor 目录：vendor/modules.txt 里仍然是 grpc v1.62.1，构建用的是 vendor 里的旧副本，"
                      "go.mod 的改动根本没有生效。")],
                [_bash("go mod vendor && go build ./...", "")],
                [_edit(f"{SRC}/orders/internal/client/conn.go", "grpc.WithInsecure()",
                       "grpc.WithTransportCredentials(insecure.NewCredentials())")],
                [_bash("go build ./... && go test ./...", "ok  \torders/internal/client\t0.412s")],
                [text("go build ./... 已通过：conn.go 改用 grpc.WithTransportCredentials(insecure.NewCredentials())，"
                      "并用 go mod vendor 重新同步了 vendor 目录，go test ./... 全部通过。")],
            ],
        )
    ],
    facts=["undefined: grpc.WithInsecure", "vendor/modules.txt", "grpc.WithTransportCredentials(insecure.NewCredentials())",
           "go mod vendor", "go build ./..."],
    superseded=["grpc 版本太新导致的"],
)

JA_CRON = Scenario(
    "ja-cron-blocked",
    "夜間バッチが動かない",
    f"{SRC}/batch",
    [
        (
            "夜間の集計バッチ scripts/nightly.sh が昨日から動いていません。見てもらえますか。",
            [
                [_bash("journalctl -u nightly.service --since yesterday | tail -5",
                       "nightly.sh[2211]: psql: error: connection to server at \"db.internal\" (10.0.3.4), port 5432 "
                       "failed: FATAL:  password authentication failed for user \"batch\"\n"
                       "systemd[1]: nightly.service: Main process exited, code=exited, status=2/INVALIDARGUMENT")],
                [text("原因はパスワードの期限切れだと思います。~/.pgpass を新しいパスワードに更新しました。"),
                 _edit(f"{SRC}/batch/.pgpass", "db.internal:5432:*:batch:old", "db.internal:5432:*:batch:new")],
                [_bash("sudo systemctl start nightly.service && journalctl -u nightly.service -n 3",
                       "nightly.sh[2301]: psql: error: connection to server at \"db.internal\" (10.0.3.4), port 5432 "
                       "failed: FATAL:  password authentication failed for user \"batch\"")],
                [text(".pgpass を更新してもうまくいきませんでした。DB 管理者のメモを見ると、batch ユーザーは昨日 "
                      "LDAP 認証に切り替えられていて、パスワード認証はもう使えません。")],
                [text("この環境からは LDAP のサービスアカウントを発行できないため、バッチはまだ止まったままです。"
                      "DB 管理者に batch 用のサービスアカウントを発行してもらう必要があります。")],
            ],
        )
    ],
    facts=["scripts/nightly.sh", "password authentication failed for user", "LDAP", "まだ止まったまま"],
    superseded=["パスワードの期限切れ"],
)

KO_DOCKER = Scenario(
    "ko-docker-cache",
    "도커 빌드가 느림",
    f"{SRC}/shopapi",
    [
        (
            "docker build가 매번 npm ci부터 다시 해서 10분씩 걸립니다. 캐시가 왜 안 먹는지 봐 주세요.",
            [
                [_read(f"{SRC}/shopapi/Dockerfile", "COPY . .\nRUN npm ci\nRUN npm run build")],
                [text("COPY . . 가 npm ci 앞에 있어서 소스가 바뀔 때마다 캐시가 깨집니다. package*.json만 먼저 "
                      "복사하도록 Dockerfile을 바꿨습니다."),
                 _edit(f"{SRC}/shopapi/Dockerfile", "COPY . .\nRUN npm ci",
                       "COPY package*.json ./\nRUN npm ci\nCOPY . .")],
                [_bash("docker build -t shopapi . 2>&1 | tail -4",
                       "#7 [3/5] RUN npm ci\n#7 0.512 npm warn deprecated inflight@1.0.6\n#7 DONE 402.3s\n"
                       "#9 exporting to image")],
                [text("그래도 npm ci 단계가 또 402초 걸렸습니다. 캐시가 여전히 안 먹습니다.")],
                [_bash("cat .dockerignore", "cat: .dockerignore: No such file or directory")],
                [text("원인은 .dockerignore가 없다는 것입니다. 빌드 컨텍스트에 node_modules와 매번 바뀌는 "
                      ".git 폴더가 들어가서 package-lock.json의 타임스탬프까지 바뀌는 것으로 확인됐습니다.")],
                [_edit(f"{SRC}/shopapi/.dockerignore", "", "node_modules\n.git\ndist")],
                [_bash("docker build -t shopapi . 2>&1 | tail -3", "#7 [3/5] RUN npm ci\n#7 CACHED\n#9 exporting to image")],
                [text("이제 npm ci 단계가 CACHED로 나옵니다. .dockerignore를 추가해서 node_modules와 .git을 빌드 "
                      "컨텍스트에서 뺐고, 소스만 바뀐 재빌드는 20초 안에 끝납니다.")],
            ],
        )
    ],
    facts=["Dockerfile", ".dockerignore", "package*.json", "CACHED", "node_modules"],
    superseded=[],
)

EN_WORKER = Scenario(
    "en-worker-econnrefused",
    "Worker cannot reach Postgres",
    f"{SRC}/jobs",
    [
        (
            "Since we moved the database into docker compose, the job worker no longer starts on my laptop, while the "
            "API container works fine against the same database. I already restarted both containers twice. "
            "The worker log says: Error: connect ECONNREFUSED 127.0.0.1:5432 right after it boots.",
            [
                [_read(f"{SRC}/jobs/worker/.env", "DATABASE_URL=postgres://jobs@127.0.0.1:5432/jobs")],
                [text("The worker's DATABASE_URL points at 127.0.0.1, which inside its container is the container "
                      "itself, not the db service.")],
                [_edit(f"{SRC}/jobs/worker/.env", "@127.0.0.1:5432", "@db:5432")],
                [_bash("docker compose up -d worker && docker compose logs worker --tail 3",
                       "worker-1  | connected to postgres://jobs@db:5432/jobs\nworker-1  | waiting for jobs")],
                [text("The worker starts and connects now: worker/.env uses the compose service name db instead of "
                      "127.0.0.1.")],
            ],
        )
    ],
    facts=["worker/.env", "ECONNREFUSED 127.0.0.1:5432", "db instead of 127.0.0.1", "service name db"],
)

PROBES = [EN_LOGIN, ZH_GO, JA_CRON, KO_DOCKER, EN_WORKER]

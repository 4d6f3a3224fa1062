"""Longer Chinese, Japanese and Korean sessions: withdrawn guesses and fixes, decisive findings
mid-session, sessions that end blocked, a 40-odd tool-call build. Scripted as corpora.py writes them."""

from __future__ import annotations

from tests.capture.corpora import Scenario, text
from tests.capture.corpus_scenarios import SRC, _bash, _edit, _read

K8S = f"{SRC}/gateway"
DESCRIBE = """Name:         gateway-7d9f8c6b5-x2k4q
Status:       Running
Containers:
  gateway:
    Liveness:   http-get http://:8080/healthz delay=5s timeout=1s period=10s
    Readiness:  http-get http://:8080/ready delay=5s timeout=1s period=10s
Events:
  Warning  Unhealthy  3m (x12 over 5m)  kubelet  Liveness probe failed: Get "http://10.1.4.7:8080/healthz": context deadline exceeded
  Normal   Killing    3m                kubelet  Container gateway failed liveness probe, will be restarted"""

ZH_PROBE = Scenario(
    "zh-k8s-probe",
    "gateway Pod 反复重启",
    K8S,
    [
        (
            "gateway 的 Pod 每隔几分钟就被重启一次，帮我查一下 deploy/gateway.yaml 的探针配置。",
            [
                [_bash("kubectl describe pod gateway-7d9f8c6b5-x2k4q -n prod", DESCRIBE)],
                [text("原因是内存不足，容器被 OOMKilled 了，我把 resources.limits.memory 从 256Mi 调到 512Mi。"),
                 _edit(f"{K8S}/deploy/gateway.yaml", "memory: 256Mi", "memory: 512Mi")],
                [_bash("kubectl get pod -n prod -l app=gateway -w",
                       "gateway-6c5b7d8f9-p8m2n   1/1   Running   0   1m\ngateway-6c5b7d8f9-p8m2n   0/1   Running   1   4m")],
                [text("不对，还是每 4 分钟重启一次，Events 里根本没有 OOMKilled，内存不是原因。")],
                [_read(f"{K8S}/deploy/gateway.yaml",
                       "livenessProbe:\n  httpGet:\n    path: /healthz\n    port: 8080\n  timeoutSeconds: 1")],
                [_bash("kubectl exec gateway-6c5b7d8f9-p8m2n -n prod -- curl -s -o /dev/null -w '%{time_total}' localhost:8080/healthz",
                       "2.413")],
                [text("找到了：/healthz 会同步检查下游 Redis，响应要 2.4 秒，而 livenessProbe 的 timeoutSeconds 只有 1 秒，"
                      "所以 kubelet 判定探活失败并重启容器。")],
                [_edit(f"{K8S}/deploy/gateway.yaml", "path: /healthz\n    port: 8080\n  timeoutSeconds: 1",
                       "path: /livez\n    port: 8080\n  timeoutSeconds: 3")],
                [_bash("kubectl apply -f deploy/gateway.yaml && kubectl get pod -n prod -l app=gateway",
                       "deployment.apps/gateway configured\ngateway-5f4d9c7b8-q7w3e   1/1   Running   0   15m")],
                [text("已修复：livenessProbe 改为探测不依赖 Redis 的 /livez，timeoutSeconds 调为 3，Pod 运行 15 分钟没有再重启。"
                      "决定：存活探针只检查进程本身，依赖检查放到 readinessProbe。")],
            ],
        )
    ],
    facts=["deploy/gateway.yaml", "/livez", "timeoutSeconds", "context deadline exceeded", "2.4 秒",
           "kubectl describe pod gateway-7d9f8c6b5-x2k4q -n prod", "readinessProbe"],
    superseded=["原因是内存不足", "256Mi 调到 512Mi"],
)

ZH_BLOCKED = Scenario(
    "zh-npm-blocked",
    "私有 npm 源安装失败",
    f"{SRC}/portal",
    [
        (
            "npm install 装不上 @acme/ui，报 401，帮我看看 .npmrc。",
            [
                [_bash("npm install @acme/ui",
                       "npm error code E401\nnpm error 401 Unauthorized - GET https://npm.acme.dev/@acme%2fui - "
                       "authentication token not provided\nnpm error A complete log of this run can be found in: "
                       "/home/dev/.npm/_logs/debug-0.log")],
                [_read(f"{SRC}/portal/.npmrc", "@acme:registry=https://npm.acme.dev/\n//npm.acme.dev/:_authToken=${NPM_TOKEN}")],
                [text("原因是环境变量 NPM_TOKEN 没有设置，.npmrc 里的 ${NPM_TOKEN} 展开为空。")],
                [_bash("NPM_TOKEN=$(cat ~/.config/acme/npm-token) npm install @acme/ui",
                       "npm error code E403\nnpm error 403 Forbidden - GET https://npm.acme.dev/@acme%2fui - "
                       "user dev is not allowed to access package @acme/ui")],
                [text("设置 NPM_TOKEN 之后还是失败，报 E403：令牌有效，但账号 dev 没有 @acme/ui 的读取权限。"
                      "这个问题在本地无法解决，需要 npm.acme.dev 的管理员给 dev 账号开通 @acme/ui 的读权限，"
                      "依赖暂时没有装上。")],
            ],
        )
    ],
    facts=["npm install @acme/ui", "E401", "E403", ".npmrc", "NPM_TOKEN", "没有装上"],
)

DB = f"{SRC}/shop"
DBMATE_FAIL = """Applying: 20261130_unique_users_email.sql
Error: pq: could not create unique index "users_email_key"
DETAIL: Key (email)=(ana@example.com) is duplicated."""

JA_MIGRATION = Scenario(
    "ja-dbmate-unique",
    "users.email のユニーク制約マイグレーション",
    DB,
    [
        (
            "dbmate up が db/migrations/20261130_unique_users_email.sql で止まります。直してください。",
            [
                [_bash("dbmate up", DBMATE_FAIL)],
                [text("原因は大文字小文字だけが違うメールアドレスの重複だと考え、lower(email) で一意にします。"),
                 _edit(f"{DB}/db/migrations/20261130_unique_users_email.sql",
                       "CREATE UNIQUE INDEX users_email_key ON users (email);",
                       "CREATE UNIQUE INDEX users_email_key ON users (lower(email));")],
                [_bash("dbmate up", DBMATE_FAIL.replace("(email)=", "(lower(email))="))],
                [text("違いました。lower(email) でも同じ ana@example.com が重複しているので、大文字小文字の問題ではありません。")],
                [_bash("psql \"$DATABASE_URL\" -c \"SELECT email, count(*) FROM users GROUP BY email HAVING count(*) > 1\"",
                       "      email       | count\n------------------+-------\n ana@example.com  |     2\n(1 row)")],
                [text("判明しました: 2025年のインポートで同じユーザーが2回登録されており、重複は完全一致の1件だけです。")],
                [_edit(f"{DB}/db/migrations/20261130_unique_users_email.sql", "CREATE UNIQUE INDEX",
                       "DELETE FROM users a USING users b WHERE a.email = b.email AND a.id > b.id;\nCREATE UNIQUE INDEX")],
                [_bash("dbmate up", "Applying: 20261130_unique_users_email.sql\nApplied: 20261130_unique_users_email.sql in 41ms")],
                [text("修正しました。マイグレーションの先頭で重複行のうち id が大きい方を DELETE してから "
                      "users_email_key を作るようにし、dbmate up が通りました。")],
            ],
        )
    ],
    facts=["db/migrations/20261130_unique_users_email.sql", "dbmate up", "could not create unique index",
           "HAVING count(*) > 1", "users_email_key", "DELETE"],
    absent=["`1` (written)"],
    superseded=["大文字小文字だけが違うメールアドレスの重複"],
)

JA_BLOCKED = Scenario(
    "ja-flaky-e2e",
    "E2E テストの不安定さ",
    f"{SRC}/store",
    [
        (
            "e2e/checkout.spec.ts がCIでだけ時々落ちます。調べてください。",
            [
                [_bash("npx playwright test e2e/checkout.spec.ts --repeat-each=20",
                       "  1) e2e/checkout.spec.ts:14:5 › pays with card\n"
                       "    TimeoutError: locator.click: Timeout 5000ms exceeded.\n"
                       "  3 failed\n  17 passed (2.1m)")],
                [text("原因はカード入力の iframe が読み込まれる前にクリックしていることです。"),
                 _edit(f"{SRC}/store/e2e/checkout.spec.ts", "await page.click('#pay')",
                       "await page.frameLocator('#card').locator('input').waitFor();\n  await page.click('#pay')")],
                [_bash("npx playwright test e2e/checkout.spec.ts --repeat-each=20",
                       "    TimeoutError: locator.click: Timeout 5000ms exceeded.\n  2 failed\n  18 passed (2.0m)")],
                [text("iframe を待つ修正は効かなかったです。まだ 20 回中 2 回 TimeoutError で落ちます。"
                      "ローカルでは決済サンドボックスの応答が遅い時だけ再現するので、原因はまだ特定できていません。"
                      "未解決のまま、次はサンドボックスの応答時間をログに出して確かめる必要があります。")],
            ],
        )
    ],
    facts=["e2e/checkout.spec.ts", "TimeoutError: locator.click: Timeout 5000ms exceeded",
           "npx playwright test e2e/checkout.spec.ts --repeat-each=20", "未解決"],
    superseded=["iframe が読み込まれる前にクリックしている"],
)


def _cmake_steps() -> list[list[dict]]:
    """A long build: 40-odd tool calls of configure, compile and probe output."""
    root = f"{SRC}/codec"
    steps: list[list[dict]] = [[text("빌드 로그부터 확인하겠습니다.")]]
    for number in range(12):
        steps.append([_bash(f"cmake --build build --target codec_{number} -j2",
                            f"[{number * 8}%] Building CXX object src/CMakeFiles/codec_{number}.dir/part.cpp.o\n"
                            f"[{number * 8 + 4}%] Linking CXX static library libcodec_{number}.a")])
    link_error = ("[ 97%] Linking CXX executable codec_cli\n"
                  "/usr/bin/ld: src/libcodec.a(frame.cpp.o): undefined reference to `ZSTD_compressStream2'\n"
                  "collect2: error: ld returned 1 exit status\n"
                  "gmake[2]: *** [src/CMakeFiles/codec_cli.dir/build.make:97: codec_cli] Error 1")
    steps.append([_bash("cmake --build build -j2", link_error)])
    steps.append([text("원인은 ZSTD_STATIC_LINKING_ONLY가 정의되지 않은 것입니다. 그래서 CMakeLists.txt에 추가했습니다."),
                  _edit(f"{root}/CMakeLists.txt", "add_library(codec", "add_compile_definitions(ZSTD_STATIC_LINKING_ONLY)\n"
                        "add_library(codec")])
    steps.append([_bash("cmake --build build -j2", link_error)])
    steps.append([text("안 됐습니다. 같은 undefined reference 오류가 그대로 납니다.")])
    for number in range(26):
        steps.append([_read(f"{root}/src/codec/frame_{number}.cpp", f"#include <zstd.h>\nint frame_{number}();")])
    steps.append([_bash("grep -n zstd build/CMakeCache.txt",
                        "zstd_DIR:PATH=/usr/lib/x86_64-linux-gnu/cmake/zstd\n"
                        "ZSTD_LIBRARY:FILEPATH=/usr/lib/x86_64-linux-gnu/libzstd.so.1.4.8")])
    steps.append([text("원인은 find_package(zstd)가 시스템의 libzstd 1.4.8을 zstd::libzstd_shared로 링크한다는 것입니다. "
                       "ZSTD_compressStream2는 1.4.0부터 있지만 이 배포판 빌드에서는 안정 API로 내보내지 않습니다.")])
    steps.append([_edit(f"{root}/CMakeLists.txt", "find_package(zstd REQUIRED)",
                        "find_package(zstd 1.5.5 REQUIRED CONFIG PATHS ${CMAKE_SOURCE_DIR}/third_party/zstd)")])
    steps.append([_bash("cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j2",
                        "-- Found zstd: 1.5.5\n[100%] Built target codec_cli")])
    steps.append([text("빌드가 성공했습니다. CMakeLists.txt에서 find_package(zstd 1.5.5 REQUIRED CONFIG ...)로 "
                       "third_party/zstd의 1.5.5를 쓰게 바꿨고 codec_cli가 링크됩니다. "
                       "결정: zstd는 시스템 패키지 대신 third_party의 고정 버전을 쓰기로 했습니다.")])
    return steps


KO_CMAKE = Scenario(
    "ko-cmake-zstd",
    "codec_cli 링크 오류",
    f"{SRC}/codec",
    [("cmake --build build 하면 codec_cli 링크에서 실패합니다. 고쳐 주세요.", _cmake_steps())],
    facts=["undefined reference to `ZSTD_compressStream2'", "libzstd 1.4.8", "zstd::libzstd_shared", "CMakeLists.txt",
           "find_package(zstd 1.5.5 REQUIRED CONFIG", "cmake --build build -j2"],
    absent=["#include <zstd.h>", "Linking CXX static library"],
    superseded=["ZSTD_STATIC_LINKING_ONLY가 정의되지 않은 것"],
)

KO_BLOCKED = Scenario(
    "ko-cert-blocked",
    "스테이징 TLS 인증서 갱신",
    f"{SRC}/edge",
    [
        (
            "스테이징 인증서가 내일 만료됩니다. certbot으로 갱신해 주세요.",
            [
                [_bash("sudo certbot renew --cert-name staging.acme.dev",
                       "Failed to renew certificate staging.acme.dev with error: Some challenges have failed.\n"
                       "  Type:   connection\n  Detail: 203.0.113.9: Fetching http://staging.acme.dev/.well-known/"
                       "acme-challenge/abc: Timeout during connect (likely firewall problem)")],
                [text("80번 포트가 막혀 있어서 HTTP-01 챌린지가 실패했습니다. 보안 그룹에 80번 포트를 열었습니다.")],
                [_bash("sudo certbot renew --cert-name staging.acme.dev",
                       "Failed to renew certificate staging.acme.dev with error: Some challenges have failed.\n"
                       "  Detail: Timeout during connect (likely firewall problem)")],
                [text("보안 그룹을 연 것도 효과가 없었습니다. 여전히 Timeout during connect 오류가 납니다. "
                      "회사 방화벽이 외부에서 80번 포트로 들어오는 연결을 막고 있어서 제가 해결할 수 없고, "
                      "인증서는 아직 갱신되지 않았습니다. 네트워크 팀이 방화벽을 열거나 DNS-01 챌린지로 바꿔야 합니다.")],
            ],
        )
    ],
    facts=["sudo certbot renew --cert-name staging.acme.dev", "Timeout during connect", "갱신되지 않았습니다", "DNS-01"],
    superseded=["보안 그룹에 80번 포트를 열었습니다"],
)

CHINESE = [ZH_PROBE, ZH_BLOCKED]
JAPANESE = [JA_MIGRATION, JA_BLOCKED]
KOREAN = [KO_CMAKE, KO_BLOCKED]

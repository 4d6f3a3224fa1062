"""The scripted sessions behind the synthetic corpora (see corpora.py)."""

from __future__ import annotations

from tests.capture.corpora import Scenario, patch, text, tool

SRC = "/home/dev/src"


def _read(path: str, body: str) -> dict:
    return tool("read", {"filePath": path}, f"<path>{path}</path>\n<content>\n{body}\n</content>")


def _bash(command: str, output: str, description: str = "run") -> dict:
    return tool("bash", {"command": command, "description": description}, output)


def _edit(path: str, old: str, new: str) -> dict:
    return tool("edit", {"filePath": path, "oldString": old, "newString": new}, "Edit applied successfully.")


def _write(path: str, content: str) -> dict:
    return tool("write", {"filePath": path, "content": content}, "Wrote file successfully.")


KOREAN = [
    Scenario(
        "ko-ci-cache",
        "CI 캐시 키 수정",
        f"{SRC}/web",
        [
            (
                "GitHub Actions 캐시가 매번 미스가 납니다. .github/workflows/ci.yml 좀 봐 주세요",
                [
                    [text("워크플로 파일을 확인하겠습니다."), _read(f"{SRC}/web/.github/workflows/ci.yml",
                     "key: deps-${{ hashFiles('**/package-lock.json') }}")],
                    [_bash("ls", "pnpm-lock.yaml\npackage.json\nsrc")],
                    [_edit(f"{SRC}/web/.github/workflows/ci.yml", "hashFiles('**/package-lock.json')",
                           "hashFiles('**/pnpm-lock.yaml')")],
                    [text("원인: 캐시 키가 package-lock.json을 해시했는데 이 저장소에는 pnpm-lock.yaml만 있습니다. "
                          "ci.yml의 키를 hashFiles('**/pnpm-lock.yaml')로 바꿨습니다. 이제 의존성이 바뀔 때만 캐시가 갱신됩니다.")],
                ],
            )
        ],
        facts=[".github/workflows/ci.yml", "hashFiles('**/pnpm-lock.yaml')", "pnpm-lock.yaml"],
    ),
    Scenario(
        "ko-compose",
        "postgres 컨테이너 재시작 문제",
        f"{SRC}/infra",
        [
            (
                "docker compose up 하면 db 컨테이너가 계속 재시작돼요. 왜 그런지 찾아 주세요",
                [
                    [_bash("docker compose logs db --tail 20",
                           "db-1  | initdb: error: could not change permissions of directory \"/var/lib/postgresql/data\"")],
                    [text("로그를 보니 원인은 bind mount로 연결한 ./data 폴더의 권한 문제입니다."),
                     _read(f"{SRC}/infra/docker-compose.yml", "volumes:\n  - ./data:/var/lib/postgresql/data")],
                    [_edit(f"{SRC}/infra/docker-compose.yml", "./data:/var/lib/postgresql/data",
                           "pgdata:/var/lib/postgresql/data")],
                    [text("docker-compose.yml에서 볼륨을 named volume pgdata로 바꿨습니다. "
                          "앞으로 데이터베이스 데이터는 bind mount 대신 named volume을 쓰기로 결정했습니다. "
                          "docker compose up 후 db 컨테이너가 정상 상태입니다.")],
                ],
            )
        ],
        facts=["docker-compose.yml", "pgdata", "docker compose logs db --tail 20", "could not change permissions",
               "named volume"],
    ),
]

JAPANESE = [
    Scenario(
        "ja-login-test",
        "ログインテストの失敗を修正",
        f"{SRC}/api",
        [
            (
                "tests/test_api.py の test_login が落ちます。直してください",
                [
                    [_bash("pytest tests/test_api.py -k test_login", "E   AssertionError: 401 != 200\n1 failed")],
                    [text("トークンの生成処理を確認します。"),
                     _read(f"{SRC}/api/auth/token.py", "expires = datetime.now() + timedelta(minutes=5)")],
                    [text("原因はトークンの有効期限が UTC ではなくローカル時刻で計算されていたことです。"),
                     _edit(f"{SRC}/api/auth/token.py", "datetime.now()", "datetime.now(timezone.utc)")],
                    [_bash("pytest tests/test_api.py -k test_login", "1 passed")],
                    [text("auth/token.py を修正し、datetime.now(timezone.utc) を使うようにしました。"
                          "時刻は常に UTC で扱う方針に決定しました。テストは通りました。")],
                ],
            )
        ],
        facts=["auth/token.py", "datetime.now(timezone.utc)", "AssertionError", "pytest tests/test_api.py -k test_login",
               "UTC"],
    ),
    Scenario(
        "ja-migration",
        "マイグレーションの事故調査",
        f"{SRC}/billing",
        [
            (
                "本番で alembic upgrade head が途中で止まりました。何が起きたか調べてください",
                [
                    [_bash("alembic history | tail -3", "a1b2 -> c3d4 (head), add invoices.currency")],
                    [_read(f"{SRC}/billing/migrations/versions/c3d4_add_currency.py",
                           "op.add_column('invoices', sa.Column('currency', sa.String(3), nullable=False))")],
                    [text("判明したこと: c3d4 が既存行のある invoices に NOT NULL 列をデフォルトなしで追加していました。"
                          "server_default='JPY' を追加して修正しました。\n"
                          "教訓: マイグレーションは本番前に必ず alembic upgrade head --sql で確認する。")],
                ],
            )
        ],
        facts=["c3d4_add_currency.py", "server_default='JPY'", "alembic upgrade head --sql"],
    ),
]

CHINESE = [
    Scenario(
        "zh-redis-timeout",
        "修复 Redis 连接超时",
        f"{SRC}/queue",
        [
            (
                "worker 启动时报 Redis 连接超时，帮我看看",
                [
                    [_bash("python -m worker", "redis.exceptions.ConnectionError: Timeout connecting to redis-old:6379")],
                    [text("发现 REDIS_URL 仍然指向旧主机 redis-old:6379，这个主机已经下线。"),
                     _read(f"{SRC}/queue/config/settings.py", "REDIS_URL = 'redis://redis-old:6379/0'")],
                    [_edit(f"{SRC}/queue/config/settings.py", "REDIS_URL = 'redis://redis-old:6379/0'",
                           "REDIS_URL = os.environ['REDIS_URL']")],
                    [text("已修改 config/settings.py，改为从环境变量读取 REDIS_URL。"
                          "决定：所有连接串一律从环境变量读取，不再写死在代码里。")],
                ],
            )
        ],
        facts=["config/settings.py", "REDIS_URL", "redis-old:6379", "ConnectionError", "python -m worker"],
    ),
    Scenario(
        "zh-lint",
        "统一代码格式",
        f"{SRC}/tools",
        [
            (
                "把项目的格式化工具从 black 换成 ruff format",
                [
                    [_read(f"{SRC}/tools/pyproject.toml", "[tool.black]\nline-length = 100")],
                    [_edit(f"{SRC}/tools/pyproject.toml", "[tool.black]\nline-length = 100",
                           "[tool.ruff]\nline-length = 100")],
                    [_bash("ruff format --check .", "12 files already formatted")],
                    [text("pyproject.toml 中的 [tool.black] 已替换为 [tool.ruff]，ruff format --check 通过。"
                          "原因：ruff 比 black 快得多，而且可以和 lint 共用一份配置。\n后续：在 CI 里把 black 步骤删掉。")],
                ],
            ),
            (
                "顺便把 CI 里的 black 步骤也删掉",
                [
                    [_edit(f"{SRC}/tools/.github/workflows/lint.yml", "run: black --check .", "run: ruff format --check .")],
                    [text("已修改 .github/workflows/lint.yml：black 步骤改为 ruff format --check。")],
                ],
            ),
        ],
        facts=["pyproject.toml", "ruff format --check", "[tool.ruff]", ".github/workflows/lint.yml"],
        absent=["后续：在 CI 里把 black 步骤删掉"],
    ),
]

DEPLOY_ROOT = f"{SRC}/shopfront"
CONTINUED = [
    Scenario(
        "continued-deploy",
        "Fix deploy rsync target and add smoke test",
        DEPLOY_ROOT,
        [
            (
                "Deploys land in the wrong folder; scripts/deploy.sh rsyncs to prod:/srv/app",
                [
                    [text("Let me read the deploy script."), _read(f"{DEPLOY_ROOT}/scripts/deploy.sh",
                                                                   "rsync -a dist/ prod:/srv/app")],
                    [_edit(f"{DEPLOY_ROOT}/scripts/deploy.sh", "prod:/srv/app", "prod:/srv/shopfront")],
                    [text("Fixed the rsync target in scripts/deploy.sh: it now syncs to prod:/srv/shopfront, the folder "
                          "nginx serves.\nFollow-up: add a smoke test that curls /healthz after the deploy.")],
                ],
            ),
            (
                "Add the healthz smoke test you suggested",
                [
                    [_edit(f"{DEPLOY_ROOT}/scripts/deploy.sh", "rsync -a dist/ prod:/srv/shopfront",
                           "rsync -a dist/ prod:/srv/shopfront\ncurl -fsS https://shop.example.com/healthz")],
                    [_bash("sh -n scripts/deploy.sh && echo ok", "ok")],
                    [text("Added a healthz smoke test: scripts/deploy.sh now runs `curl -fsS "
                          "https://shop.example.com/healthz` after the rsync and fails the deploy if it fails.")],
                ],
            ),
        ],
        facts=["prod:/srv/shopfront", "scripts/deploy.sh", "curl -fsS https://shop.example.com/healthz"],
        absent=["Follow-up: add a smoke test"],
    ),
]


def _long_session() -> Scenario:
    """About 150 parts: ten sed reads of one file, new modules, test runs, memoryd's own writes."""
    root = f"{SRC}/payments"
    steps: list[list[dict]] = [[text("I'll read the gateway in slices.")]]
    for start in range(1, 401, 40):
        steps.append([_bash(f"sed -n '{start},{start + 39}p' payments/gateway.py", "def charge(...):\n    ...")])
    steps.append([tool("read", {"filePath": root}, "payments/\ntests/\nREADME.md")])
    for name in ("retry", "idempotency", "errors"):
        steps.append([_write(f"{root}/payments/{name}.py", f"# {name}\n")])
        steps.append([text(f"Created payments/{name}.py."), patch(f"{root}/payments/{name}.py")])
    for number in range(30):
        steps.append([_edit(f"{root}/payments/gateway.py", f"old{number}", f"new{number}")])
        steps.append([_bash("pytest tests/payments -q", f"{number + 1} passed")])
    steps.append([_bash("pytest tests/payments -q",
                        "E   payments.errors.IdempotencyKeyError: key reused with another amount\n1 failed")])
    steps.append([text("The retry path reused the idempotency key with a new amount; the key now hashes the amount too.")])
    steps.append([_edit(f"{root}/payments/idempotency.py", "key = order_id", "key = f'{order_id}:{amount}'")])
    steps.append([patch(f"{root}/.memory/ROOT.md", f"{root}/.memory/sessions/index.md", f"{root}/payments/idempotency.py")])
    steps.append([text("Split payments/gateway.py: retries live in payments/retry.py, idempotency keys in "
                       "payments/idempotency.py, errors in payments/errors.py. pytest tests/payments -q passes. "
                       "Gotcha: an idempotency key must include the amount, or a retried charge with a new amount "
                       "is rejected as IdempotencyKeyError.")])
    return Scenario(
        "long-refactor",
        "Split the payments gateway",
        root,
        [("Split payments/gateway.py into smaller modules and keep the tests green", steps)],
        facts=["payments/gateway.py", "payments/retry.py", "payments/idempotency.py", "payments/errors.py",
               "pytest tests/payments -q", "IdempotencyKeyError"],
        absent=["sed -n", ".memory/"],
    )


SUBAGENTS = [
    Scenario(
        "subagents-audit",
        "Audit feature flags",
        f"{SRC}/flags",
        [
            (
                "Which feature flags are dead? Use subagents to check the backend and the frontend.",
                [
                    [tool("task", {"description": "Find flags in backend", "prompt": "grep the backend for flags"},
                          "<task_result>Backend reads FLAG_NEW_CHECKOUT in api/checkout.py; FLAG_LEGACY_SEARCH is "
                          "defined in flags.yaml but never read.</task_result>"),
                     tool("task", {"description": "Find flags in frontend", "prompt": "grep the frontend"},
                          "<task_result>The frontend reads FLAG_NEW_CHECKOUT in web/src/Checkout.tsx only."
                          "</task_result>")],
                    [text("FLAG_LEGACY_SEARCH is dead: defined in flags.yaml, read nowhere. FLAG_NEW_CHECKOUT is live "
                          "in api/checkout.py and web/src/Checkout.tsx.")],
                ],
            )
        ],
        facts=["FLAG_LEGACY_SEARCH", "flags.yaml", "FLAG_NEW_CHECKOUT", "api/checkout.py"],
        children=[
            Scenario("child-backend", "Find flags in backend", f"{SRC}/flags",
                     [("grep the backend for flags", [[tool("grep", {"pattern": "FLAG_"}, "api/checkout.py:3")]])]),
            Scenario("child-frontend", "Find flags in frontend", f"{SRC}/flags",
                     [("grep the frontend", [[tool("grep", {"pattern": "FLAG_"}, "web/src/Checkout.tsx:9")]])]),
        ],
    ),
    Scenario(
        "lesson-alembic",
        "Investigate missing server default",
        f"{SRC}/ledger",
        [
            (
                "Why does the new column have no default in production?",
                [
                    [_bash("alembic upgrade head --sql | grep currency",
                           "ALTER TABLE entries ADD COLUMN currency VARCHAR(3) NOT NULL")],
                    [text("Autogenerate dropped the server default: the model sets default='EUR' in Python only.\n"
                          "Lesson: alembic autogenerate ignores Python-side defaults; set server_default on the "
                          "column.\nAdded server_default='EUR' to ledger/models.py and a new revision.")],
                ],
            )
        ],
        facts=["server_default='EUR'", "ledger/models.py", "alembic upgrade head --sql"],
    ),
]

MARKDOWN = [
    Scenario(
        "markdown-summary",
        "Fix flaky sync test",
        f"{SRC}/sync",
        [
            (
                "CI fails intermittently:\n```\nFAILED tests/test_sync.py::test_flush - AssertionError: 0 != 3\n```\n"
                "can you make it reliable?",
                [
                    [_read(f"{SRC}/sync/tests/test_sync.py", "worker.start()\ntime.sleep(0.1)\nassert sink.count == 3")],
                    [text("The test waits a fixed 100 ms for the worker thread."),
                     _edit(f"{SRC}/sync/tests/test_sync.py", "time.sleep(0.1)", "worker.join(timeout=5)")],
                    [_edit(f"{SRC}/sync/src/sync/worker.py", "class Worker:", "class Worker:\n    def join(self, timeout): ...")],
                    [_bash("pytest -q", "48 passed in 3.1s")],
                    [text("## Summary\n\nI made `tests/test_sync.py::test_flush` deterministic.\n\n"
                          "**Root cause:** the test relied on `time.sleep(0.1)` to wait for the worker thread, which "
                          "is too short on a loaded runner.\n\n**Changes:**\n"
                          "- Replaced the sleep with `worker.join(timeout=5)` in tests/test_sync.py\n"
                          "- Added `Worker.join()` to src/sync/worker.py\n\n"
                          "All 48 tests pass now (`pytest -q`).\n\nWould you like me to look for other sleeps in the tests?")],
                ],
            )
        ],
        facts=["tests/test_sync.py", "worker.join(timeout=5)", "src/sync/worker.py", "pytest -q", "time.sleep(0.1)",
               "AssertionError: 0 != 3"],
        absent=["Would you like me"],
    ),
]

CORPORA = {
    "synthetic-ko": KOREAN,
    "synthetic-ja": JAPANESE,
    "synthetic-zh": CHINESE,
    "synthetic-en": [*CONTINUED, _long_session(), *SUBAGENTS, *MARKDOWN],
}

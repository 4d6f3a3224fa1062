"""A third set of multi-turn sessions, written in another hand after the rules were built: other
wordings of retraction ("scratch that", "nope, same error", "turns out it was…", "rolled it back",
还是不行/改回去了, やっぱりダメ/元に戻した, 여전히 안 돼/되돌렸다), sessions that end blocked, and long tool
logs (rustc's error[E0502], pytest's FAILED lines, npm ERR!, git's fatal:)."""

from __future__ import annotations

from tests.capture.corpora import Scenario, text
from tests.capture.corpus_scenarios import SRC, _bash, _edit, _read

LEDGER = f"{SRC}/ledger"


def _cargo_log(code: str, message: str, line: int, source: str) -> str:
    """A long cargo build log: compiling lines, warnings, one diagnostic with its source excerpt."""
    crates = [f"   Compiling {name} v0.{n}.{n + 3}" for n, name in enumerate(
        ["libc", "serde", "itoa", "ryu", "serde_json", "chrono", "rust_decimal", "thiserror", "indexmap", "ledger"])]
    return "\n".join([
        *crates,
        "warning: unused import: `std::fmt::Write`",
        " --> src/report.rs:3:5",
        "  |",
        "3 | use std::fmt::Write;",
        "  |     ^^^^^^^^^^^^^^^",
        f"error[{code}]: {message}",
        f"  --> src/ledger.rs:{line}:13",
        "   |",
        f"{line - 1} |         for entry in self.entries.iter() {{",
        "   |                      ------------------- immutable borrow occurs here",
        f"{line} |             {source}",
        "   |             ^^^^^^^^^^^^^^^^^^^^^^ mutable borrow occurs here",
        "",
        f"For more information about this error, try `rustc --explain {code}`.",
        "warning: `ledger` (lib) generated 1 warning",
        "error: could not compile `ledger` (lib) due to 1 previous error; 1 warning emitted",
    ])


EN_LEDGER = Scenario(
    "en-ledger-borrow",
    "Borrow errors after splitting Ledger::apply",
    LEDGER,
    [
        (
            "cargo build fails since I split Ledger::apply into apply_entry and post_batch. Get it compiling again, "
            "please, without changing what the public methods return.",
            [
                [_bash("cargo build", _cargo_log("E0502", "cannot borrow `*self` as mutable because it is also "
                                                 "borrowed as immutable", 88, "self.apply_entry(entry)?;"))],
                [text("The problem is probably in apply_entry: it keeps the &Account from self.accounts.get() alive "
                      "while it calls self.post(), which needs &mut self."),
                 _read(f"{LEDGER}/src/ledger.rs", "let acct = self.accounts.get(&entry.account).unwrap();\n"
                       "self.post(acct, entry.amount)?;")],
                [_edit(f"{LEDGER}/src/ledger.rs", "let acct = self.accounts.get(&entry.account).unwrap();",
                       "let acct = self.accounts.get(&entry.account).unwrap().clone();")],
                [text("Cloned the account in apply_entry before calling self.post(), so the immutable borrow ends "
                      "first.")],
                [_bash("cargo build", _cargo_log("E0502", "cannot borrow `*self` as mutable because it is also "
                                                 "borrowed as immutable", 88, "self.apply_entry(entry)?;"))],
                [text("Scratch that: the clone changed nothing, rustc reports the same E0502 at src/ledger.rs:88, "
                      "which is in post_batch, not in apply_entry. I rolled the clone back."),
                 _edit(f"{LEDGER}/src/ledger.rs", "let acct = self.accounts.get(&entry.account).unwrap().clone();",
                       "let acct = self.accounts.get(&entry.account).unwrap();")],
                [text("Turns out it was the loop in post_batch: it iterates self.entries.iter() and calls "
                      "self.apply_entry() inside it, so the iterator's borrow of self.entries overlaps the mutable "
                      "borrow of self.")],
                [_edit(f"{LEDGER}/src/ledger.rs", "for entry in self.entries.iter() {",
                       "let entries = std::mem::take(&mut self.entries);\n        for entry in entries.iter() {")],
                [_bash("cargo build && cargo test", "   Compiling ledger v0.9.12\n    Finished dev [unoptimized] "
                       "target(s) in 4.10s\n     Running unittests src/lib.rs\ntest result: ok. 31 passed; 0 failed; "
                       "0 ignored")],
                [text("cargo build and cargo test pass again (31 tests): post_batch takes the entries out with "
                      "std::mem::take before the loop and puts them back after it, so apply_entry can borrow self "
                      "mutably; the public methods are unchanged.")],
            ],
        ),
        (
            "Picking this up again after lunch. CI is still red on the branch, but now it is cargo clippy -- -D "
            "warnings that fails, on the same file, with needless_collect in post_batch. Please make clippy pass too, "
            "keep the order of the entries exactly as it is (the reconciliation job depends on it), and do not "
            "add any allow attributes.",
            [
                [_bash("cargo clippy -- -D warnings", "    Checking ledger v0.9.12\nerror: avoid using `collect()` "
                       "when not needed\n  --> src/ledger.rs:91:14\n   |\n91 |             .collect::<Vec<_>>();\n"
                       "   |              ^^^^^^^\n   = note: `-D clippy::needless-collect` implied by `-D warnings`\n"
                       "error: could not compile `ledger` (lib) due to 1 previous error")],
                [_edit(f"{LEDGER}/src/ledger.rs", ".filter(|e| e.is_open())\n            .collect::<Vec<_>>();",
                       ".filter(|e| e.is_open());")],
                [_bash("cargo clippy -- -D warnings && cargo test", "    Checking ledger v0.9.12\n    Finished dev "
                       "[unoptimized] target(s) in 1.92s\ntest result: ok. 31 passed; 0 failed; 0 ignored")],
                [text("cargo clippy -- -D warnings is clean now: post_batch iterates the filtered entries directly "
                      "instead of collecting them into a Vec first, the entries keep their order, and no allow "
                      "attribute was added.")],
            ],
        ),
    ],
    facts=["error[E0502]", "post_batch", "std::mem::take", "cargo clippy -- -D warnings", "src/ledger.rs",
           "keep the order of the entries", "31 tests"],
    absent=["Compiling serde v0.1.4", "let acct = self.accounts.get(&entry.account).unwrap();"],
    superseded=["Cloned the account in apply_entry", "keeps the &Account from self.accounts.get() alive"],
)

NGINX = f"{SRC}/edge"
EN_UPLOAD = Scenario(
    "en-upload-413",
    "Uploads fail through the proxy",
    NGINX,
    [
        (
            "Large uploads to /upload fail with a 502 through nginx; straight to the app on :8000 they work.",
            [
                [_bash("tail -n 3 /var/log/nginx/error.log", "2026/11/30 09:12:01 [error] 812#812: *41 upstream "
                       "prematurely closed connection while reading response header from upstream, client: "
                       "10.0.0.8, server: edge, request: \"POST /upload HTTP/1.1\"")],
                [text("The upstream keepalive timeout is too short for slow uploads. Raised proxy_read_timeout to "
                      "300s in conf.d/edge.conf and reloaded nginx; uploads go through now."),
                 _edit(f"{NGINX}/conf.d/edge.conf", "proxy_read_timeout 30s;", "proxy_read_timeout 300s;")],
            ],
        ),
        (
            "nope, same error. Uploads over 10 MB still get a 502, the small ones were always fine.",
            [
                [_bash("journalctl -u edge-app -n 4", "edge-app[990]: WARNING body exceeds MAX_CONTENT_LENGTH "
                       "(10485760), closing connection\nedge-app[990]: INFO 127.0.0.1 POST /upload 413")],
                [text("The proxy_read_timeout change was not it, so I reverted it in conf.d/edge.conf."),
                 _edit(f"{NGINX}/conf.d/edge.conf", "proxy_read_timeout 300s;", "proxy_read_timeout 30s;")],
                [text("Turns out it was the app, not nginx: edge-app's MAX_CONTENT_LENGTH is 10 MB, so it closes "
                      "the connection on bigger bodies and nginx reports that as a 502.")],
                [_edit(f"{NGINX}/app/settings.py", "MAX_CONTENT_LENGTH = 10 * 1024 * 1024",
                       "MAX_CONTENT_LENGTH = 200 * 1024 * 1024")],
                [_bash("curl -s -o /dev/null -w '%{http_code}' -F file=@big.bin http://edge.local/upload", "200")],
                [text("A 150 MB upload through nginx returns 200 now: app/settings.py allows 200 MB in "
                      "MAX_CONTENT_LENGTH, matching nginx's client_max_body_size 200m.")],
            ],
        ),
    ],
    facts=["MAX_CONTENT_LENGTH", "app/settings.py", "client_max_body_size 200m", "upstream prematurely closed",
           "10 MB"],
    superseded=["Raised proxy_read_timeout to 300s", "keepalive timeout is too short"],
)

WEB = f"{SRC}/webshop"
NPM_LOG = """npm ERR! code ERESOLVE
npm ERR! ERESOLVE unable to resolve dependency tree
npm ERR!
npm ERR! While resolving: webshop@4.2.0
npm ERR! Found: react@18.3.1
npm ERR! node_modules/react
npm ERR!   react@"^18.3.1" from the root project
npm ERR!
npm ERR! Could not resolve dependency:
npm ERR! peer react@"^17.0.2" from @acme/charts@2.3.0
npm ERR! node_modules/@acme/charts
npm ERR!   @acme/charts@"^2.3.0" from the root project
npm ERR!
npm ERR! A complete log of this run can be found in: /home/dev/.npm/_logs/2026-11-30T08_01_12_331Z-debug-0.log"""
ZH_CHARTS = Scenario(
    "zh-charts-eresolve",
    "CI 上 npm ci 装不上依赖",
    WEB,
    [
        (
            "CI 里 npm ci 一直报 ERESOLVE，本地 node_modules 是旧的所以没发现。帮我看看怎么让依赖装上，别用 --force。",
            [
                [_bash("rm -rf node_modules && npm ci", NPM_LOG)],
                [text("估计是 react 和 react-dom 的版本对不上，我把 react-dom 也升到 18.3.1。"),
                 _edit(f"{WEB}/package.json", '"react-dom": "^18.2.0"', '"react-dom": "^18.3.1"')],
                [_bash("npm install && npm ci", NPM_LOG)],
                [text("还是不行，报的还是同一个 ERESOLVE。package.json 已经改回去了。"),
                 _edit(f"{WEB}/package.json", '"react-dom": "^18.3.1"', '"react-dom": "^18.2.0"')],
                [_bash("npm view @acme/charts versions peerDependencies --json",
                       '{"versions": ["2.3.0", "3.0.0", "3.1.0"], "peerDependencies": {"react": "^17.0.2"}}')],
                [text("确认了：冲突来自 @acme/charts 2.3.0，它的 peerDependencies 只接受 react@^17，而项目用的是 "
                      "react 18.3.1。支持 react 18 的是 @acme/charts 3.x。")],
                [_bash("npm install @acme/charts@3.1.0", "npm ERR! code E404\nnpm ERR! 404 Not Found - GET "
                       "https://registry.npmjs.org/@acme%2fcharts/-/charts-3.1.0.tgz")],
                [text("还没解决：@acme/charts 3.x 只发布在公司内部源 npm.acme.internal，CI 和这台机器都没有它的访问令牌，"
                      "所以依赖仍然装不上。需要前端组把 3.1.0 同步到公共镜像，或者给 CI 配置内部源的 NPM_TOKEN。")],
            ],
        )
    ],
    facts=["ERESOLVE", "@acme/charts", "peerDependencies", "react@^17", "还没解决", "npm.acme.internal"],
    absent=["npm ERR! node_modules/react"],
    superseded=["react 和 react-dom 的版本对不上", "react-dom 也升到 18.3.1"],
)

REPORTS = f"{SRC}/reports"
PYTEST_LOG = """============================= test session starts ==============================
platform linux -- Python 3.12.7, pytest-8.3.3, pluggy-1.5.0
rootdir: /home/dev/src/reports
collected 42 items

tests/test_export.py ..F.F.......                                        [ 28%]
tests/test_summary.py ..............................                     [100%]

=================================== FAILURES ===================================
____________________________ test_csv_dates _________________________________
    def test_csv_dates(tmp_path):
        export.to_csv(FRAME, tmp_path / "out.csv")
>       assert (tmp_path / "out.csv").read_text().splitlines()[1] == "2026-11-01,42"
E       AssertionError: assert '2026-11-01 00:00:00,42' == '2026-11-01,42'
=========================== short test summary info ============================
FAILED tests/test_export.py::test_csv_dates - AssertionError: assert '2026-11-01 00:00:00,42' == '2026-11-01,42'
FAILED tests/test_export.py::test_csv_month - AssertionError: assert '2026-11-01 00:00:00' == '2026-11'
========================= 2 failed, 40 passed in 3.08s ========================="""
JA_EXPORT = Scenario(
    "ja-export-dates",
    "CSV エクスポートのテストが CI で落ちる",
    REPORTS,
    [
        (
            "tests/test_export.py が CI でだけ落ちます。ローカルでは通ります。原因を調べて直してください。",
            [
                [_bash("pytest tests/ -q", PYTEST_LOG)],
                [text("タイムゾーンの違いだと思います。conftest.py で TZ=UTC を固定しました。"),
                 _edit(f"{REPORTS}/tests/conftest.py", "import os", "import os\nos.environ['TZ'] = 'UTC'")],
                [_bash("pytest tests/test_export.py -q", PYTEST_LOG)],
                [text("やっぱりダメでした。同じ 2 件が FAILED のままです。conftest.py の変更は元に戻しました。"),
                 _edit(f"{REPORTS}/tests/conftest.py", "import os\nos.environ['TZ'] = 'UTC'", "import os")],
                [_bash("pip show pandas | head -2", "Name: pandas\nVersion: 2.2.3")],
                [text("原因は pandas のバージョンでした。CI は pandas 2.2.3 を入れていて、datetime 列を to_csv すると "
                      "時刻まで書き出します。ローカルは 2.1 のままでした。")],
                [_edit(f"{REPORTS}/reports/export.py", "frame.to_csv(path, index=False)",
                       "frame.to_csv(path, index=False, date_format=\"%Y-%m-%d\")")],
                [_bash("pytest tests/ -q", "..........................................\n42 passed in 2.91s")],
                [text("reports/export.py で to_csv に date_format=\"%Y-%m-%d\" を明示したので、pandas 2.2.3 でも "
                      "日付だけが書き出され、pytest tests/ の 42 件がすべて通りました。")],
            ],
        )
    ],
    facts=["tests/test_export.py", "pandas 2.2.3", "date_format", "reports/export.py", "42 件"],
    absent=["platform linux -- Python 3.12.7", "collected 42 items"],
    superseded=["TZ=UTC を固定しました", "タイムゾーンの違い"],
)

INFRA = f"{SRC}/infra"
KO_PUSH = Scenario(
    "ko-push-denied",
    "git push 거부",
    INFRA,
    [
        (
            "infra 저장소에 git push가 안 됩니다. DNS TTL 변경 커밋을 main에 올려야 해요.",
            [
                [_bash("git push origin main", "remote: Write access to repository not granted.\nfatal: unable to "
                       "access 'https://github.com/acme/infra.git/': The requested URL returned error: 403")],
                [text("토큰이 만료된 것 같습니다. credential helper에 저장된 토큰을 지우고 새 토큰으로 다시 "
                      "로그인했습니다."),
                 _bash("git credential reject <<< 'protocol=https\nhost=github.com'", "")],
                [_bash("git push origin main", "remote: Write access to repository not granted.\nfatal: unable to "
                       "access 'https://github.com/acme/infra.git/': The requested URL returned error: 403")],
                [text("여전히 안 됩니다. 같은 403 오류가 납니다. credential 설정은 원래대로 되돌렸습니다.")],
                [_bash("gh api repos/acme/infra/branches/main/protection --jq .required_pull_request_reviews",
                       '{"required_approving_review_count": 1, "require_code_owner_reviews": true}')],
                [text("원인은 main 브랜치 보호 규칙입니다: main에는 직접 푸시할 수 없고 CODEOWNERS의 리뷰 승인이 "
                      "한 번 필요합니다.")],
                [_bash("git push origin HEAD:dns-ttl && gh pr create --fill --base main",
                       "https://github.com/acme/infra/pull/214")],
                [text("dns-ttl 브랜치로 푸시하고 PR #214를 열었지만, CODEOWNERS인 네트워크 팀의 승인이 없어서 "
                      "DNS TTL 변경은 아직 main에 반영되지 않았습니다. 네트워크 팀이 PR #214를 승인해야 합니다.")],
            ],
        )
    ],
    facts=["403", "CODEOWNERS", "PR #214", "dns-ttl", "아직 main에 반영되지 않았습니다"],
    superseded=["토큰이 만료된 것 같습니다", "새 토큰으로 다시 로그인했습니다"],
)

ENGINE = f"{SRC}/engine"
CARGO_TEST_FAIL = "\n".join([
    "running 120 tests", *["test t ... ok"] * 30,
    "test storage::tests::compaction_keeps_tombstones ... FAILED", "", "failures:", "",
    "---- storage::tests::compaction_keeps_tombstones stdout ----",
    "thread 'storage::tests::compaction_keeps_tombstones' panicked at src/storage.rs:412:9:",
    "assertion `left == right` failed", "  left: 3", " right: 2", "",
    "test result: FAILED. 119 passed; 1 failed; 0 ignored",
])


def _tombstone_steps() -> list[list[dict]]:
    """A 40-step session: reads, checks, a failing workspace test, a wrong guess, the real cause."""
    steps = [[_read(f"{ENGINE}/src/mod_{n}.rs", f"pub fn f{n}() {{}}")] for n in range(12)]
    steps += [[_bash(f"cargo check -p engine-{n}", f"    Checking engine-{n} v0.1.0\n    Finished dev in 0.{n}s")]
              for n in range(8)]
    steps += [
        [_bash("cargo test --workspace", CARGO_TEST_FAIL)],
        [text("The compaction test fails: compaction drops a tombstone. I bet the off-by-one is in `merge_runs`, "
              "which skips the last entry of each run.")],
        [_edit(f"{ENGINE}/src/storage.rs", "for i in 0..run.len() - 1 {", "for i in 0..run.len() {")],
        [_bash("cargo test -p engine storage::tests", CARGO_TEST_FAIL)],
        [text("Nope, same failure, so merge_runs was fine; I reverted that edit.")],
        [_edit(f"{ENGINE}/src/storage.rs", "for i in 0..run.len() {", "for i in 0..run.len() - 1 {")],
        [_bash("RUST_LOG=trace cargo test -p engine compaction_keeps_tombstones -- --nocapture 2>&1 | grep -i tomb",
               "TRACE gc: dropping tombstone key=k7 seq=41 (older than horizon 40)\nTRACE gc: kept tombstone key=k2 "
               "seq=38")],
        [text("Turns out it was the GC horizon comparison in `gc.rs`: it drops a tombstone whose seq is *newer* than "
              "the horizon because it compares with `>` instead of `<`.")],
        [_edit(f"{ENGINE}/src/gc.rs", "if t.seq > horizon {", "if t.seq < horizon {")],
    ]
    steps += [[_bash(f"cargo clippy -p engine-{n} -- -D warnings", f"    Checking engine-{n} v0.1.0\n    Finished")]
              for n in range(6)]
    steps += [
        [_bash("cargo test --workspace", "test result: ok. 120 passed; 0 failed; 0 ignored")],
        [text("All 120 workspace tests pass: `gc.rs` now drops only tombstones older than the GC horizon "
              "(`t.seq < horizon`), so compaction keeps the newer tombstone. The merge_runs loop is unchanged.")],
    ]
    return steps


EN_TOMBSTONE = Scenario(
    "en-rust-tombstone",
    "Compaction test failing",
    ENGINE,
    [("cargo test --workspace fails on compaction_keeps_tombstones since yesterday's merge. Fix it.",
      _tombstone_steps())],
    facts=["compaction_keeps_tombstones", "gc.rs", "t.seq < horizon", "120", "panicked at src/storage.rs:412:9"],
    absent=["test t ... ok", "Checking engine-3"],
    superseded=["off-by-one is in `merge_runs`"],
)

HELDOUT = [EN_LEDGER, EN_UPLOAD, ZH_CHARTS, JA_EXPORT, KO_PUSH, EN_TOMBSTONE]

"""Real text a coding agent reads all day that holds no secret, built once under bench/out/:
test-runner logs and minified bundles, for bench_scrub's `testlogs` and `minified` corpora.

The logs are real runs here: `go test -v` over standard-library packages (subtests whose
names hold `=`, `&`, `key`), `pytest -v` over this repository's tests, `cargo test` and
`jest --verbose` over a small crate and test file written for the run, and DejaGnu's
`runtest` checking libstdc++ headers with g++ the way a GCC testsuite does (`PASS: … -std=c++17
(test for excess errors)`). A tool that is not installed is left out, with a note. The
bundles are the dist files of popular npm packages, fetched by `npm pack`; the `i18n` corpus
is the machine's gettext catalogs.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from datasets import cached  # bench/datasets.py

ROOT = Path(__file__).resolve().parent.parent
GO_PACKAGES = "net/url encoding/base64 encoding/json encoding/hex crypto/hmac crypto/sha256 crypto/x509 net/http/cookiejar text/template mime".split()
PYTEST_FILES = "tests/test_scrub.py tests/test_scrub_scan.py tests/test_config.py tests/test_files.py tests/test_logs.py tests/test_state.py".split()
# (package, dist file inside its tarball)
BUNDLES = (
    ("jquery@3.7.1", "package/dist/jquery.min.js"),
    ("lodash@4.17.21", "package/lodash.min.js"),
    ("react-dom@18.3.1", "package/umd/react-dom.production.min.js"),
    ("vue@3.4.38", "package/dist/vue.global.prod.js"),
    ("moment@2.30.1", "package/min/moment-with-locales.min.js"),
    ("bootstrap@5.3.3", "package/dist/js/bootstrap.bundle.min.js"),
)

_CRATE = '''//! Token bucket and password policy helpers, tested.
pub fn refill(tokens: u32, rate: u32, max: u32) -> u32 { (tokens + rate).min(max) }
pub fn strong_password(p: &str) -> bool { p.len() >= 12 && p.chars().any(|c| c.is_ascii_digit()) }
pub fn redact_secret(s: &str) -> String { "*".repeat(s.len()) }
#[cfg(test)]
mod tests {
    use super::*;
    #[test] fn refill_caps_tokens_at_max() { assert_eq!(refill(9, 5, 10), 10); }
    #[test] fn refill_adds_rate_tokens() { assert_eq!(refill(1, 2, 10), 3); }
    #[test] fn strong_password_needs_a_digit() { assert!(!strong_password("correcthorsebattery")); }
    #[test] fn strong_password_accepts_long_mixed() { assert!(strong_password("correct4horse")); }
    #[test] fn redact_secret_keeps_length() { assert_eq!(redact_secret("abc"), "***"); }
    #[test] #[ignore] fn api_key_rotation_against_live_server() {}
    #[test] fn token_refresh_fails_on_expired_secret() { assert!(refill(0, 0, 0) == 1, "expired"); }
}
'''
_JEST = '''const crypto = require("crypto");
const hash = (s) => crypto.createHash("sha256").update(s).digest("hex");
describe("auth/token", () => {
  test("refresh token rotates the secret", () => { expect(hash("a")).not.toBe(hash("b")); });
  test("password reset sends one email", () => { expect([1].length).toBe(1); });
  test.each([["api_key=abc", 7], ["token=xyz", 5]])("parses %s", (s, n) => { expect(s.indexOf("=")).toBe(n); });
  test("access key id is masked", () => { expect("AKIA****".startsWith("AKIA")).toBe(false); });
});
describe("session cookie", () => {
  it("sets HttpOnly and Secure", () => { expect("HttpOnly; Secure").toContain("Secure"); });
  it.skip("signs with the HMAC secret", () => {});
});
'''
_DEJAGNU = '''set headers [lsort [glob -nocomplain -directory $srcdir/include {*}{*.h bits/*.h}]]
foreach header [lrange $headers 0 59] {
    set name [string range $header [expr {[string length $srcdir] + 9}] end]
    foreach std {c++11 c++17} {
        set result [catch {exec g++ -fsyntax-only -std=$std -x c++ -include $header /dev/null} output]
        if {$result == 0} { pass "$name -std=$std (test for excess errors)" } else { fail "$name -std=$std (test for excess errors)" }
    }
}
'''


def _run(args: list[str], cwd: Path, log: Path, timeout: int = 1200) -> None:
    """Run a test command, its output (failing tests included) into `log`."""
    with log.open("w", encoding="utf-8") as out:
        subprocess.run(args, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, timeout=timeout, check=False)


def _build_logs(folder: Path) -> None:
    work = folder / "work"
    work.mkdir()
    if shutil.which("go"):
        _run(["go", "test", "-v", "-count=1", *GO_PACKAGES], work, folder / "go-test.log")
    _run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", *PYTEST_FILES], ROOT, folder / "pytest.log")
    if shutil.which("cargo"):
        crate = work / "policy"
        (crate / "src").mkdir(parents=True)
        (crate / "Cargo.toml").write_text('[package]\nname = "policy"\nversion = "0.1.0"\nedition = "2021"\n')
        (crate / "src" / "lib.rs").write_text(_CRATE)
        _run(["cargo", "test", "--offline"], crate, folder / "cargo-test.log")
    if shutil.which("npm"):
        jest = work / "jest"
        jest.mkdir()
        (jest / "package.json").write_text('{"name": "jest-run", "version": "1.0.0"}\n')
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "jest@29"], cwd=jest, capture_output=True, timeout=900, check=False)
        (jest / "auth.test.js").write_text(_JEST)
        _run(["npx", "jest", "--verbose", "--ci"], jest, folder / "jest.log")
    if shutil.which("runtest") and shutil.which("g++"):
        suite = work / "dejagnu"
        (suite / "libstdc++.headers").mkdir(parents=True)
        (suite / "libstdc++.headers" / "headers.exp").write_text(_DEJAGNU)
        cxx = sorted(Path("/usr/include/c++").iterdir())[-1]
        (suite / "include").symlink_to(cxx)
        _run(["runtest", "--tool", "libstdc++", "--srcdir", str(suite), "--all"], suite, folder / "dejagnu.log")
        summary = suite / "libstdc++.sum"  # (the `.sum` file is what a build's log keeps)
        if summary.exists():
            shutil.copy(summary, folder / "dejagnu.sum")
    shutil.rmtree(work)
    missing = [tool for tool in ("go", "cargo", "npm", "runtest") if not shutil.which(tool)]
    if missing:
        print(f"(testlogs: {', '.join(missing)} not installed; their logs are left out)", flush=True)


def _build_bundles(folder: Path) -> None:
    for package, member in BUNDLES:
        packed = subprocess.run(["npm", "pack", "--silent", package], cwd=folder, capture_output=True, text=True, timeout=300, check=True).stdout.split()[-1]
        with tarfile.open(folder / packed) as tar:
            source = tar.extractfile(member)
            if source is None:
                raise OSError(f"{package}: no {member} in its tarball")
            (folder / f"{package.split('@')[0]}.{Path(member).name}").write_bytes(source.read())
        (folder / packed).unlink()


def testlogs() -> list[tuple[str, str]]:
    folder = cached("test-logs", _build_logs)
    return [(path.name, path.read_text(encoding="utf-8", errors="replace")) for path in sorted(folder.iterdir()) if path.suffix in (".log", ".sum")]


def i18n() -> list[tuple[str, str]]:
    """The machine's gettext catalogs (/usr/share/locale): real translations, every message
    and its translation, in every language installed ("Passwort", "mot de passe", "密码")."""
    import gettext

    found = []
    for path in sorted(Path("/usr/share/locale").glob("*/LC_MESSAGES/*.mo")):
        try:
            with path.open("rb") as handle:
                catalog = gettext.GNUTranslations(handle)._catalog
        except (OSError, ValueError, IndexError):  # (a catalog gettext cannot read, not UTF-8 or with a bad header, is left out)
            continue
        text = "".join(f"{key[0] if isinstance(key, tuple) else key}\n{value}\n" for key, value in catalog.items() if key and value)
        found.append((f"{path.parts[-3]}/{path.name}", text))
    return found


def minified() -> list[tuple[str, str]]:
    try:
        folder = cached("minified-bundles", _build_bundles)
    except (OSError, subprocess.SubprocessError) as exc:
        sys.exit(f"bench_scrub: cannot fetch the minified bundles with npm ({exc})")
    return [(path.name, path.read_text(encoding="utf-8")) for path in sorted(folder.glob("*.js"))]

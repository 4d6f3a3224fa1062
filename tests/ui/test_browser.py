"""The viewer in a real browser: Debian's chromium, driven by Playwright.

Skipped when chromium or Playwright is missing, unless MEMORYD_REQUIRE_BROWSER=1 (CI sets
it: `.ci/install-browser`). Screenshots of every page go to .artifacts/ui/ (ignored by git).
"""

from __future__ import annotations

import http.server
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import XSS_PROMPT, World

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / ".artifacts" / "ui"
REBIND_HOST = "rebind.test"  # resolved to 127.0.0.1 by the browser: what DNS rebinding does
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    f"--host-resolver-rules=MAP {REBIND_HOST} 127.0.0.1",
]  # fmt: skip


def expect(locator):  # noqa: ANN001, ANN201 - Playwright's assertions, which wait for the page
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def _playwright():  # -> the sync_playwright function, or a skip
    missing = []
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing.append("Playwright for Python (pip install playwright)")
        sync_playwright = None
    if not Path(CHROMIUM).exists():
        missing.append(f"{CHROMIUM} (apt-get install chromium)")
    if missing:
        message = "real-browser tests need " + " and ".join(missing) + ": run .ci/install-browser"
        if os.environ.get("MEMORYD_REQUIRE_BROWSER") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return sync_playwright


BROWSER_VERSION: list[str] = []  # named in the test report (conftest's terminal summary)


@pytest.fixture(scope="module")
def browser_context() -> Iterator:
    """A chromium with a fresh profile of its own, for this module's tests."""
    sync_playwright = _playwright()
    profile = tempfile.mkdtemp(prefix="memoryd-chromium-")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        with sync_playwright() as p:
            context = p.chromium.launch_persistent_context(
                profile, executable_path=CHROMIUM, args=ARGS, headless=True, viewport={"width": 1200, "height": 900}
            )
            BROWSER_VERSION[:] = [f"Chromium {context.browser.version if context.browser else '?'}"]
            (ARTIFACTS / "browser.txt").write_text(BROWSER_VERSION[0] + "\n")
            # Playwright writes files from its event loop's executor thread: started here,
            # once, so no test is taken for leaking it.
            warm = context.new_page()
            warm.screenshot(path=str(Path(profile) / "warm.png"))
            warm.close()
            try:
                yield context
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(autouse=True)
def no_leaked_threads() -> Iterator[None]:
    """The suite's rule, but for the threads of Playwright's own event loop's executor,
    which its sync API keeps for the module's browser (named asyncio_N, made on demand).
    The viewer's loop joins its executor's threads when it ends (asyncio.run)."""
    before = set(threading.enumerate())
    yield
    leaked = [t for t in threading.enumerate() if t not in before and t.is_alive() and not t.name.startswith("asyncio_")]
    for thread in leaked:
        thread.join(timeout=2)
    assert not [t.name for t in leaked if t.is_alive()]


@pytest.fixture
def page(browser_context, served):  # noqa: ANN001
    browser_context.clear_cookies()
    tab = browser_context.new_page()
    dialogs: list[str] = []
    tab.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    tab.dialogs = dialogs
    try:
        yield tab
    finally:
        tab.close()


def root(served) -> str:  # noqa: ANN001
    return f"http://127.0.0.1:{served.port}"


def open_viewer(page, served) -> None:  # noqa: ANN001
    page.goto(served.url)


def nav(page, name: str):  # noqa: ANN001, ANN201 - a Locator
    return page.get_by_role("navigation", name="Main").get_by_role("link", name=name, exact=True)


def shot(page, name: str) -> None:  # noqa: ANN001
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def test_the_secret_opens_it_once_then_an_httponly_strict_cookie(page, served) -> None:  # noqa: ANN001
    open_viewer(page, served)
    assert page.url == root(served) + "/"  # the secret left the address bar
    expect(page.get_by_role("heading", name="Overview")).to_be_visible()
    cookies = page.context.cookies()
    assert [(c["httpOnly"], c["sameSite"]) for c in cookies] == [(True, "Strict")]
    assert page.evaluate("document.cookie") == ""  # no script can read it
    shot(page, "overview")


@pytest.mark.parametrize("query", ["", "?token=wrong"])
def test_without_the_secret_the_browser_gets_401_and_no_data(page, served, query: str) -> None:  # noqa: ANN001
    answer = page.goto(root(served) + "/memories" + query)
    assert answer.status == 401
    text = page.inner_text("body")
    assert "memoryd ui" in text and "Use WAL mode" not in text and "Never push" not in text


def test_a_rebound_name_is_refused(page, served) -> None:  # noqa: ANN001
    # A page on evil.test whose name now resolves to 127.0.0.1 (DNS rebinding).
    answer = page.goto(f"http://{REBIND_HOST}:{served.port}/?token={served.viewer.secret}")
    assert answer.status == 421
    assert "Overview" not in page.inner_text("body") and page.context.cookies() == []


def test_browse_sessions_and_open_a_note(page, served, world: World) -> None:  # noqa: ANN001
    open_viewer(page, served)
    nav(page, "Sessions").click()
    expect(page.get_by_role("heading", name="Sessions")).to_be_visible()
    shot(page, "sessions")
    page.get_by_role("link", name="Session 1: fixed the flaky login test").click()
    expect(page.get_by_role("heading", name="What Was Worked On")).to_be_visible()
    expect(page.locator(".body li", has_text="the login test, round 1")).to_be_visible()
    shot(page, "note")


def test_browse_memories_hard_rules_first(page, served, world: World) -> None:  # noqa: ANN001
    open_viewer(page, served)
    nav(page, "Memories").click()
    titles = page.locator("ul.list > li > a").all_inner_texts()
    assert titles[0] == "Never push to main" and "Use WAL mode" in titles
    page.get_by_label("Kind").select_option("decision")
    page.get_by_role("button", name="Show").click()
    assert page.locator("ul.list > li > a").all_inner_texts() == ["Use WAL mode"]
    shot(page, "memories")
    page.get_by_role("link", name="Use WAL mode").click()
    expect(page.get_by_role("heading", name="Use WAL mode")).to_be_visible()
    shot(page, "memory")


def test_search_as_you_type_in_cjk(page, served, world: World) -> None:  # noqa: ANN001
    open_viewer(page, served)
    nav(page, "Search").click()
    page.wait_for_url(re.compile(r".*/search$"))
    page.wait_for_load_state()  # htmx listens from DOMContentLoaded on: a person types later than that
    page.get_by_label("As in project").select_option(str(world.project))
    page.get_by_label("Words").press_sequentially("部署")
    mark = page.locator("#results mark").first
    mark.wait_for()
    assert mark.inner_text() == "部署" and "/search" in page.url  # htmx swapped the results in place
    assert page.locator("#results li a").first.inner_text() == "部署 runs from the release branch"
    shot(page, "search")


def test_edit_a_memory_and_index_md_is_recompiled(page, served, world: World) -> None:  # noqa: ANN001
    open_viewer(page, served)
    page.goto(root(served) + f"/memories/{world.ids['wal']}")
    page.get_by_role("link", name="Edit").click()
    shot(page, "edit")
    page.get_by_label("Description (one line, for index.md)").fill("Edited in the browser: WAL keeps sessions apart.")
    body = page.get_by_label("Body (Markdown)")
    body.fill(body.input_value().replace("Never VACUUM live.", "Never VACUUM a live database."))
    page.get_by_role("button", name="Save").click()
    assert page.get_by_role("status").inner_text().startswith("Done: saved")
    text = world.file_of("wal").read_text()
    assert "Never VACUUM a live database." in text and "Checkpoint after each pass." in text
    assert "Edited in the browser" in (world.file_of("wal").parent / "index.md").read_text()


def test_forget_after_a_confirmation(page, served, world: World) -> None:  # noqa: ANN001
    open_viewer(page, served)
    page.goto(root(served) + f"/memories/{world.ids['wal']}")
    page.get_by_role("link", name="Forget…").click()
    expect(page.get_by_role("heading", name="Forget this memory?")).to_be_visible()
    assert world.file_of("wal").exists()  # asking deletes nothing
    shot(page, "forget")
    page.get_by_role("button", name="Yes, forget it").click()
    assert "forgotten: Use WAL mode" in page.get_by_role("status").inner_text()
    assert not world.file_of("wal").exists()


def test_try_a_prompt(page, served, world: World) -> None:  # noqa: ANN001
    open_viewer(page, served)
    nav(page, "What a session was given").click()
    page.get_by_label("Project").select_option(str(world.project))
    page.get_by_label("First prompt").fill("how do we checkpoint the WAL?")
    page.get_by_role("button", name="Show the block").click()
    block = page.locator("#tried pre.block").inner_text()
    assert block.startswith("<memoryd-context>") and "## Relevant to the first prompt" in block and "Use WAL mode" in block
    assert page.locator("#tried .evidence", has_text="Rank 1, score").count() == 1
    shot(page, "given-try")


def test_xss_payloads_stay_inert_in_every_field(page, served, world: World) -> None:  # noqa: ANN001
    open_viewer(page, served)
    xss = world.ids["xss"]
    pages = {
        "memories": "/memories", "memory-xss": f"/memories/{xss}", "search-xss": f"/search?q=title&project={world.project}",
        "given": "/given", "given-one": "/given/0", "edit-xss": f"/memories/{xss}/edit",
    }  # fmt: skip
    for name, path in pages.items():
        page.goto(root(served) + path)
        assert page.evaluate("window.__xss") is None, name
        assert page.locator("main script, main img, main svg, main [onerror], main [onload]").count() == 0, name
        assert page.locator("a[href^='javascript:' i]").count() == 0, name
        shot(page, name)
    assert page.dialogs == []
    # Each field shows its payload as text: title, description, tags, body, a session's prompt.
    page.goto(root(served) + f"/memories/{xss}")
    assert "<script>window.__xss = 'script'</script>" in page.locator("h1.title").inner_text()
    assert "<svg onload=" in page.locator("dd.description").inner_text()
    assert "<img src=x onerror=__xss=7>" in page.locator("dd.tags").inner_text()
    assert "[click me](javascript:window.__xss='link')" in page.locator(".body").inner_text()
    page.goto(root(served) + "/given/0")
    assert XSS_PROMPT in page.locator("dd.prompt").inner_text()


def test_a_post_without_csrf_is_refused_from_the_page_itself(page, served, world: World) -> None:  # noqa: ANN001
    open_viewer(page, served)
    status = page.evaluate(
        """async (id) => (await fetch(`/memories/${id}/forget`, {method: 'POST',
            headers: {'Content-Type': 'application/x-www-form-urlencoded'}, body: 'confirm=yes'})).status""",
        world.ids["wal"],
    )
    assert status == 403 and world.file_of("wal").exists()


class _AttackerPage(http.server.BaseHTTPRequestHandler):
    """Another site on this machine whose page posts a forget to the viewer on load."""

    timeout = 2  # a connection the browser opens ahead and never uses must not hold the server

    target = ""

    def do_GET(self) -> None:  # noqa: N802
        html = (
            f'<form id="f" method="post" action="{self.target}"><input name="confirm" value="yes"></form>'
            "<script>document.getElementById('f').submit()</script>"
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(html)))
        self.end_headers()
        self.wfile.write(html)

    def log_message(self, *args: object) -> None:
        pass


def test_a_cross_site_form_post_is_refused(page, served, world: World) -> None:  # noqa: ANN001
    open_viewer(page, served)  # the victim holds a valid cookie
    _AttackerPage.target = root(served) + f"/memories/{world.ids['wal']}/forget"
    attacker = http.server.HTTPServer(("127.0.0.1", 0), _AttackerPage)
    thread = threading.Thread(target=attacker.serve_forever, daemon=True)
    thread.start()
    try:
        with page.expect_response(re.compile(r".*/forget$")) as answer:
            page.goto(f"http://127.0.0.1:{attacker.server_address[1]}/")
        assert answer.value.status == 403
    finally:
        attacker.shutdown()
        attacker.server_close()
        thread.join()
    assert world.file_of("wal").exists()


def test_keyboard_navigation_and_labelled_controls(page, served, world: World) -> None:  # noqa: ANN001
    open_viewer(page, served)
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    # From the top, the tab order reaches the main navigation; Enter follows a link.
    page.goto(root(served) + "/")
    names = []
    for _ in range(4):
        page.keyboard.press("Tab")
        names.append(page.evaluate("document.activeElement.textContent"))
    assert names == ["Skip to content", "Overview", "Sessions", "Memories"]
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*/memories$"))
    unlabelled = """() => [...document.querySelectorAll('input:not([type=hidden]), select, textarea, button')]
        .filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label') && !el.textContent.trim())
        .map(el => el.outerHTML)"""
    for path in ("/memories", "/sessions", "/search", "/given", f"/memories/{world.ids['wal']}/edit",
                 f"/memories/{world.ids['wal']}/forget", f"/memories/{world.ids['wal']}"):  # fmt: skip
        page.goto(root(served) + path)
        assert page.evaluate(unlabelled) == [], path

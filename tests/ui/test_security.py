"""The viewer's door, over real HTTP on 127.0.0.1: secret, cookie, Host, CSRF, loopback."""

from __future__ import annotations

import httpx
import pytest
from click.testing import CliRunner

from daemon.cli.main import cli
from daemon.ui.security import COOKIE, NotLoopback, loopback_host
from daemon.ui.server import bind_loopback

from .conftest import World


def base(served) -> str:  # noqa: ANN001
    return f"http://127.0.0.1:{served.port}"


def logged_in(served) -> httpx.Client:  # noqa: ANN001
    """A client that opened the URL `memoryd ui` opens, and so holds the cookie."""
    client = httpx.Client(base_url=base(served), follow_redirects=False)
    first = client.get("/", params={"token": served.viewer.secret})
    assert first.status_code == 303 and first.headers["location"] == "/"
    return client


def csrf_of(client: httpx.Client, path: str) -> str:
    html = client.get(path).text
    return html.split('name="csrf" value="', 1)[1].split('"', 1)[0]


@pytest.mark.parametrize("path", ["/", "/memories", "/sessions", "/search?q=wal", "/given", "/static/htmx.min.js"])
@pytest.mark.parametrize("cookie", [None, "forged.0123456789abcdef"])
def test_without_the_secret_every_page_is_401_and_shows_no_data(served, world: World, path: str, cookie) -> None:  # noqa: ANN001
    cookies = {COOKIE: cookie} if cookie else {}
    answer = httpx.get(base(served) + path, cookies=cookies)
    assert answer.status_code == 401
    assert "WAL" not in answer.text and "memoryd ui" in answer.text


def test_a_wrong_secret_is_401_and_sets_no_cookie(served) -> None:  # noqa: ANN001
    answer = httpx.get(base(served) + "/memories", params={"token": served.viewer.secret[:-1] + "x"})
    assert answer.status_code == 401 and "set-cookie" not in answer.headers
    assert "Use WAL mode" not in answer.text


def test_the_secret_becomes_a_strict_httponly_cookie_and_leaves_the_url(served) -> None:  # noqa: ANN001
    answer = httpx.get(base(served) + "/memories", params={"token": served.viewer.secret, "kind": "decision"})
    assert answer.status_code == 303
    assert answer.headers["location"] == "/memories?kind=decision"  # the secret is gone from the address
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=") and "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert served.viewer.secret not in cookie
    client = httpx.Client(base_url=base(served))
    client.cookies.set(COOKIE, cookie.split(";")[0].split("=", 1)[1])
    page = client.get("/memories?kind=decision")
    assert page.status_code == 200 and "Use WAL mode" in page.text


def test_the_redirect_after_the_secret_stays_on_the_viewer(served) -> None:  # noqa: ANN001
    answer = httpx.get(base(served) + "//evil.example/x", params={"token": served.viewer.secret})
    assert answer.status_code == 303 and answer.headers["location"] == "/evil.example/x"


@pytest.mark.parametrize("host", ["evil.example", "evil.example:80", "127.0.0.1", "127.0.0.2:{port}", "localhost.evil:{port}"])
def test_a_foreign_host_header_is_refused_even_with_the_cookie(served, host: str) -> None:  # noqa: ANN001
    client = logged_in(served)
    answer = client.get("/memories", headers={"Host": host.format(port=served.port)})
    assert answer.status_code == 421 and "WAL" not in answer.text
    assert client.get("/memories", headers={"Host": f"localhost:{served.port}"}).status_code == 200


def test_no_cors_and_hardening_headers_on_every_answer(served) -> None:  # noqa: ANN001
    client = logged_in(served)
    preflight = client.options("/memories", headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"})
    assert preflight.status_code == 405
    for answer in (preflight, client.get("/memories", headers={"Origin": "http://evil.example"})):
        assert not [h for h in answer.headers if h.lower().startswith("access-control-")]
        assert "script-src 'self'" in answer.headers["content-security-policy"]
        assert answer.headers["x-frame-options"] == "DENY" and answer.headers["cache-control"] == "no-store"


def test_a_post_without_the_csrf_token_changes_nothing(served, world: World) -> None:  # noqa: ANN001
    client = logged_in(served)
    path = world.file_of("wal")
    before = path.read_bytes()
    mid = world.ids["wal"]
    for target, form in [
        (f"/memories/{mid}/edit", {"body": "hijacked", "description": "", "tags": ""}),
        (f"/memories/{mid}/hard-rule", {}),
        (f"/memories/{mid}/forget", {"confirm": "yes"}),
        (f"/memories/{mid}/forget", {"confirm": "yes", "csrf": "0" * 40}),
    ]:
        answer = client.post(target, data=form)
        assert answer.status_code == 403, target
    assert path.read_bytes() == before


def test_a_post_from_another_origin_is_refused_even_with_the_token(served, world: World) -> None:  # noqa: ANN001
    client = logged_in(served)
    token = csrf_of(client, f"/memories/{world.ids['wal']}/forget")
    answer = client.post(
        f"/memories/{world.ids['wal']}/forget", data={"csrf": token, "confirm": "yes"}, headers={"Origin": "http://evil.example"}
    )
    assert answer.status_code == 403 and world.file_of("wal").exists()


def test_another_sessions_csrf_token_is_refused(served, world: World) -> None:  # noqa: ANN001
    mine, theirs = logged_in(served), logged_in(served)
    token = csrf_of(theirs, f"/memories/{world.ids['wal']}/forget")
    assert mine.post(f"/memories/{world.ids['wal']}/forget", data={"csrf": token, "confirm": "yes"}).status_code == 403
    assert world.file_of("wal").exists()


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "10.0.0.1", "example.com", "fe80::1"])
def test_a_non_loopback_interface_is_refused(host: str) -> None:
    with pytest.raises(NotLoopback):
        loopback_host(host)
    with pytest.raises(NotLoopback):
        bind_loopback(host, 0)


def test_memoryd_ui_refuses_a_non_loopback_host(home) -> None:  # noqa: ANN001
    result = CliRunner().invoke(cli, ["ui", "--host", "0.0.0.0", "--no-browser"])
    assert result.exit_code == 2
    assert "non-loopback" in result.output and "http://" not in result.output


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "127.0.0.5"])
def test_loopback_addresses_are_accepted(host: str) -> None:
    sock = bind_loopback(host, 0)
    try:
        assert sock.getsockname()[0] in ("127.0.0.1", "::1", "127.0.0.5")
    finally:
        sock.close()


def test_the_secret_is_per_install_private_and_kept(home, world: World) -> None:  # noqa: ANN001
    from daemon.ui.security import SECRET_FILE, load_secret

    first = load_secret(world.config.paths.state_dir)
    assert load_secret(world.config.paths.state_dir) == first and len(first) >= 40
    assert (world.config.paths.state_dir / SECRET_FILE).stat().st_mode & 0o777 == 0o600

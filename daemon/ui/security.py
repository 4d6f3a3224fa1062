"""Who may use the viewer: loopback only, a per-install secret, the Host header, CSRF.

The secret lives in the state folder (0600). `memoryd ui` opens a URL that carries it
once; the viewer answers with a session cookie (HttpOnly, SameSite=Strict) and a
redirect to the same page without it, so the secret leaves the address bar and the
history. Cookie and CSRF token are HMACs of a random session id under the secret: the
viewer keeps no session table, and a new secret (delete the file) ends every session.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from pathlib import Path

from daemon.files import FILE_MODE, atomic_write_text, ensure_dir

SECRET_FILE = "ui-secret"
COOKIE = "memoryd_ui"
TOKEN_PARAM = "token"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"
LOOPBACK_NAMES = ("127.0.0.1", "::1", "localhost")


class NotLoopback(ValueError):
    """The viewer was asked to listen where other machines could reach it."""


def loopback_host(host: str) -> str:
    """Return the address to bind for `host`; raise NotLoopback for anything but loopback.

    `localhost` is taken as 127.0.0.1 rather than resolved: a hosts file can point it
    anywhere.
    """
    if host == "localhost":
        return "127.0.0.1"
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError as exc:
        raise NotLoopback(f"--host {host!r}: the viewer listens on a loopback address only (127.0.0.1 or ::1)") from exc
    if not address.is_loopback:
        raise NotLoopback(
            f"--host {host}: refusing to listen on a non-loopback interface; the viewer shows and edits "
            "your memories and is for this machine only (use 127.0.0.1 or ::1)"
        )
    return str(address)


def allowed_hosts(port: int) -> frozenset[str]:
    """The Host header values a browser on this machine sends for the viewer: a name
    that resolves elsewhere (DNS rebinding) is none of them."""
    return frozenset({f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"})


def load_secret(state_dir: Path) -> str:
    """Return this install's secret, made on first use (mode 0600, atomically)."""
    path = state_dir / SECRET_FILE
    try:
        text = path.read_text(encoding="ascii").strip()
        if len(text) >= 32:
            return text
    except FileNotFoundError:
        pass
    ensure_dir(state_dir)
    text = secrets.token_urlsafe(32)
    atomic_write_text(path, text + "\n", FILE_MODE)
    return text


def _mac(secret: str, purpose: str, session: str) -> str:
    return hmac.new(secret.encode(), f"{purpose}:{session}".encode(), hashlib.sha256).hexdigest()[:40]


def new_session_cookie(secret: str) -> str:
    """A cookie value for a new browser session: its id and the id's MAC."""
    session = secrets.token_urlsafe(18)
    return f"{session}.{_mac(secret, 'cookie', session)}"


def session_of(secret: str, cookie: str | None) -> str | None:
    """The session id a cookie carries, or None when it is missing or forged."""
    if not cookie or "." not in cookie:
        return None
    session, mac = cookie.rsplit(".", 1)
    return session if hmac.compare_digest(mac, _mac(secret, "cookie", session)) else None


def csrf_token(secret: str, session: str) -> str:
    """The token every state change of this session must carry."""
    return _mac(secret, "csrf", session)


def same(given: str | None, expected: str) -> bool:
    """Compare a secret value in constant time."""
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


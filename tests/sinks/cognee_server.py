"""Start a real Cognee server (its own venv, see .ci/install-cognee) on 127.0.0.1, offline.

Every path the server writes is inside one folder. Without a model hub the server would
stop at start-up fetching the embedding model's tokenizer: a word-level tokenizer made
here is put in an offline Hugging Face cache instead. No model answers: adding data works
without one, cognify is only requested.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("MEMORYD_COGNEE_VENV", REPO / ".cache" / "cognee-venv"))
PYTHON = VENV / "bin" / "python"
START_TIMEOUT_S = 180.0
TOKENIZER_REPO = "local/fake-embed"


def missing_reason() -> str | None:
    """Why no Cognee server can be started here, or None when it can."""
    if not PYTHON.exists():
        return f"no Cognee venv at {VENV} (run .ci/install-cognee)"
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _make_tokenizer(hf_home: Path) -> None:
    """A word-level tokenizer in the offline cache, built with the venv's `tokenizers`."""
    script = f"""
import json
from pathlib import Path
from tokenizers import Tokenizer, models, pre_tokenizers
repo = Path({str(hf_home)!r}) / "hub" / "models--{TOKENIZER_REPO.replace('/', '--')}"
rev = "0" * 40
snap = repo / "snapshots" / rev
snap.mkdir(parents=True, exist_ok=True)
(repo / "refs").mkdir(exist_ok=True)
(repo / "refs" / "main").write_text(rev)
tok = Tokenizer(models.WordLevel(vocab={{"[UNK]": 0}}, unk_token="[UNK]"))
tok.pre_tokenizer = pre_tokenizers.Whitespace()
tok.save(str(snap / "tokenizer.json"))
(snap / "tokenizer_config.json").write_text(json.dumps({{"model_max_length": 8192}}))
"""
    subprocess.run([str(PYTHON), "-c", script], check=True, timeout=120)


def server_env(home: Path, model_port: int) -> dict[str, str]:
    model = f"http://127.0.0.1:{model_port}/v1"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "EMBEDDING_", "HF_"))}
    env.update(
        HOME=str(home / "home"),
        ENABLE_BACKEND_ACCESS_CONTROL="false",
        TELEMETRY_DISABLED="1",
        COGNEE_SKIP_CONNECTION_TEST="true",  # no model here: adding data needs none
        DATA_ROOT_DIRECTORY=str(home / "data"),
        SYSTEM_ROOT_DIRECTORY=str(home / "system"),
        HF_HOME=str(home / "hf"),
        HF_HUB_OFFLINE="1",
        HUGGINGFACE_TOKENIZER=TOKENIZER_REPO,
        LLM_PROVIDER="custom",
        LLM_ENDPOINT=model,
        LLM_MODEL="fake",
        LLM_API_KEY="none",
        EMBEDDING_PROVIDER="openai_compatible",
        EMBEDDING_ENDPOINT=model,
        EMBEDDING_MODEL=TOKENIZER_REPO,
        EMBEDDING_DIMENSIONS="8",
    )
    return env


class CogneeServer:
    """One uvicorn process serving cognee.api.client:app; restartable on the same data."""

    def __init__(self, home: Path, port: int | None = None, model_port: int | None = None) -> None:
        self.home = home
        self.port = port or free_port()
        self.model_port = model_port or free_port()  # nothing listens: no model here
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None
        self.log_path = home / "server.log"

    def start(self) -> None:
        (self.home / "home").mkdir(parents=True, exist_ok=True)
        if not (self.home / "hf" / "hub").exists():
            _make_tokenizer(self.home / "hf")
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [str(PYTHON), "-m", "uvicorn", "cognee.api.client:app", "--host", "127.0.0.1", "--port", str(self.port)],
            cwd=self.home,
            env=server_env(self.home, self.model_port),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        self.wait_ready()

    def wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"Cognee server exited with {self.process.returncode}: {self.log_tail()}")
            try:
                if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"Cognee server not ready after {START_TIMEOUT_S} s: {self.log_tail()}")

    def kill(self) -> None:
        """SIGKILL the whole process group: what a crash looks like to a client."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(30)
        self.process = None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        self.process = None

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


if __name__ == "__main__":  # manual use: python tests/sinks/cognee_server.py DIR
    server = CogneeServer(Path(sys.argv[1]), port=int(sys.argv[2]) if len(sys.argv) > 2 else None)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    started = time.monotonic()
    server.start()
    print(json.dumps({"url": server.url, "ready_s": round(time.monotonic() - started, 1)}), flush=True)
    try:
        signal.pause()
    finally:
        server.stop()

"""structlog set-up: JSON lines to a rotated file, readable lines on stderr.

Every event passes the secret scrubber before it reaches any handler.
"""

from __future__ import annotations

import logging
import logging.handlers
import sys
from pathlib import Path
from typing import Any

import structlog

from daemon.capture.scrub import redact
from daemon.files import ensure_dir

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


def _scrub_event(_logger: Any, _name: str, event: dict[str, Any]) -> dict[str, Any]:
    """Redact secrets from every string in the event (keys stay as they are)."""
    for key, value in event.items():
        if isinstance(value, str):
            event[key] = redact(value)
        elif isinstance(value, (list, tuple, dict)):
            text = repr(value)
            clean = redact(text)
            if clean != text:
                event[key] = clean
    return event


_SHARED: list[Any] = [
    structlog.contextvars.merge_contextvars,
    structlog.stdlib.add_log_level,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
    structlog.processors.format_exc_info,
    _scrub_event,
]


def setup_logging(
    level: str = "info",
    log_file: Path | None = None,
    max_bytes: int = 5_000_000,
    backups: int = 3,
    stderr: bool = True,
) -> None:
    """Configure structlog + stdlib logging; safe to call again (e.g. on SIGHUP)."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
        handler.close()
    root.setLevel(_LEVELS[level])

    json_formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=_SHARED,
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, structlog.processors.JSONRenderer(ensure_ascii=False)],
    )
    if log_file is not None:
        ensure_dir(log_file.parent)
        file_handler = logging.handlers.RotatingFileHandler(
            log_file, maxBytes=max_bytes, backupCount=backups, encoding="utf-8"
        )
        file_handler.setFormatter(json_formatter)
        root.addHandler(file_handler)
        log_file.chmod(0o600)
    if stderr:
        console = logging.StreamHandler(sys.stderr)
        if sys.stderr.isatty():
            console.setFormatter(
                structlog.stdlib.ProcessorFormatter(
                    foreign_pre_chain=_SHARED,
                    processors=[
                        structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                        structlog.dev.ConsoleRenderer(colors=True),
                    ],
                )
            )
        else:
            console.setFormatter(json_formatter)
        root.addHandler(console)
    # Libraries that chatter at INFO (httpx per request, apscheduler per job run).
    for name in ("httpx", "httpcore", "apscheduler", "watchdog"):
        logging.getLogger(name).setLevel(max(logging.WARNING, _LEVELS[level]))

    structlog.configure(
        processors=[*_SHARED, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )


def get_logger(name: str = "memoryd") -> Any:
    return structlog.get_logger(name)

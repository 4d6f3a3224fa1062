"""The real-daemon fixtures of the service tests, for the agents' daemon tests."""

from tests.service.conftest import daemon, daemon_env, notify  # noqa: F401 - fixtures

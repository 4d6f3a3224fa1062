from tests.service.conftest import daemon, daemon_env, notify  # noqa: F401 - the daemon tests' fixtures

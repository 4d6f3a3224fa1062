"""`python -m daemon` is `memoryd`."""

from daemon.cli.main import main

if __name__ == "__main__":
    main()

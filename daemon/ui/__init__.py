"""The local viewer (`memoryd ui`): sessions, memories, search and what each session was
given, in the browser. A face over the same functions as the CLI (daemon.memory.commands),
imported only by `memoryd ui` and by the daemon's viewer thread."""

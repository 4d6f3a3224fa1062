"""The `memoryd` command line: thin wrappers that parse, call and print."""

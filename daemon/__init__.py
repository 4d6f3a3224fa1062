"""memoryd: an always-on memory daemon for OpenCode."""

__version__ = "0.1.0"

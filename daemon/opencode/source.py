"""The source interface lives in `daemon.source` (every agent's reader implements it);
its names are kept here for code that imported them from OpenCode's package."""

from daemon.source import MessageRow, PartRow, SessionInfo, SessionRows, SessionSource

__all__ = ["MessageRow", "PartRow", "SessionInfo", "SessionRows", "SessionSource"]

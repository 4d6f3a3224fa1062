"""The memory trees: parsing, compiling, searching, remembering and sweeping.

Submodules are imported where used (never here), so `memoryd recall` loads only what
its path needs.
"""

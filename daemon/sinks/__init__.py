"""Delivery beyond this machine: memoryd's notes (and memories) to a Cognee server."""

"""The pytest face of pytest-niah: hooks, fixtures and the per-run session."""

"""Example policies written in Python (see docs/PYTHON.md)."""

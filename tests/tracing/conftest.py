"""Fixtures of the trace-viewer tests live in uitest_support.py (shared helpers) and in each test module."""

"""Waypoint: evals."""

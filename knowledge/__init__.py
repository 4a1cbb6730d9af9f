"""Waypoint: knowledge."""

"""Waypoint: agents."""

"""Waypoint: tools."""

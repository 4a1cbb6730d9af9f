"""Waypoint: api."""

"""Waypoint: graphs."""

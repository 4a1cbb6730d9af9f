"""The MCP front end: Waypoint's tools for MCP clients over stdio and streamable HTTP (``waypoint mcp``)."""

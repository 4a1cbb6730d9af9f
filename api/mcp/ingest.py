"""What the MCP ``ingest`` tool may read: text the client sends, and files only under allowed roots.

A path names a file on the server's machine. Over stdio the client is the user who started the server, so
any readable path goes; over HTTP a remote caller could otherwise make the server index (and then search)
any file it can read, so paths are refused unless the server was started with roots they must lie under.
Sent text is kept as a Markdown or plain-text file in the data dir, named after its title, so sending the
same title again replaces that document (its id comes from the file's path, as for any file).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from knowledge.models import stable_id
from knowledge.settings import Settings

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
MAX_TITLE = 200
"""Longest title accepted for sent text."""


class IngestRefused(Exception):
    """An ingest request the server will not carry out (bad input or a path it may not read)."""


@dataclass(frozen=True)
class PathPolicy:
    """Which server-side paths a client may ingest: any (``roots`` None), none (empty), or under these roots."""

    roots: tuple[Path, ...] | None

    @classmethod
    def anywhere(cls) -> PathPolicy:
        """Any path (stdio: the client is the local user)."""
        return cls(None)

    @classmethod
    def under(cls, roots: list[Path]) -> PathPolicy:
        """Only paths inside ``roots`` (none at all when the list is empty)."""
        return cls(tuple(r.resolve() for r in roots))

    def check(self, raw: list[str]) -> list[Path]:
        """The resolved paths, or ``IngestRefused`` naming the first one not allowed or not there."""
        out = []
        for item in raw:
            if not item.strip():
                raise IngestRefused("empty path")
            path = Path(item).expanduser().resolve()
            if self.roots is not None:
                if not self.roots:
                    raise IngestRefused(
                        "this server takes no file paths (HTTP clients send text; start it with --paths-root DIR "
                        "to allow files under DIR)"
                    )
                if not any(path.is_relative_to(root) for root in self.roots):
                    raise IngestRefused(f"path {item!r} is outside the allowed roots")
            if not path.exists():
                raise IngestRefused(f"path {item!r} does not exist")
            out.append(path)
        return out


def text_file(
    settings: Settings, tenant: str, *, title: str, text: str, fmt: Literal["markdown", "text"] = "markdown"
) -> Path:
    """Write sent text to the tenant's folder of MCP texts; the file name comes from the title."""
    title = title.strip()
    if not title or len(title) > MAX_TITLE:
        raise IngestRefused(f"title must have 1 to {MAX_TITLE} characters")
    if not text.strip():
        raise IngestRefused("text is empty")
    limit = settings.ingest.max_file_bytes
    data = text.encode("utf-8")
    if len(data) > limit:
        raise IngestRefused(f"text has {len(data)} bytes; the limit is {limit}")
    slug = _UNSAFE.sub("_", title).strip("._")[:80] or "text"
    name = f"{slug}.{'md' if fmt == 'markdown' else 'txt'}"  # a plain-text document is titled by this stem
    path = settings.path("mcp_texts", stable_id(tenant), stable_id(title), name)
    if fmt == "markdown" and not text.lstrip().startswith("#"):
        data = f"# {title}\n\n".encode() + data  # the loader titles a Markdown document by its first heading
    path.write_bytes(data)
    return path

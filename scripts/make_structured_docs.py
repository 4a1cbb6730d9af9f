"""Convert pages of the Debian ``python3.11-doc`` HTML into Markdown for the structured question set.

Run once (``apt-get install python3.11-doc``); output goes to ``evals/data/structured/docs/``.
Markdown keeps the heading structure (the HTML loader's headings are checked separately) and is what
the sample knowledge base serves.
"""

from __future__ import annotations

import sys
from pathlib import Path

from bs4 import BeautifulSoup, NavigableString, Tag

SOURCE = Path("/usr/share/doc/python3.11/html/library")
PAGES = ["argparse", "sqlite3", "configparser", "subprocess"]
OUT = Path(__file__).resolve().parents[1] / "evals" / "data" / "structured" / "docs"
_BLOCKS = {"p", "pre", "dt", "li", "h1", "h2", "h3", "h4", "h5", "h6"}


def _text(tag: Tag) -> str:
    return " ".join(tag.get_text(" ", strip=True).replace("¶", "").split())


def _render(node: Tag, out: list[str]) -> None:
    for child in node.children:
        if isinstance(child, NavigableString) or not isinstance(child, Tag):
            continue
        name = child.name or ""
        if name in {"h1", "h2", "h3", "h4", "h5", "h6"}:
            out.append(f"{'#' * int(name[1])} {_text(child)}")
        elif name == "pre":
            out.append(f"```\n{child.get_text().rstrip()}\n```")
        elif name == "dt":
            out.append(f"**{_text(child)}**")
        elif name in {"p", "li"} and not child.find(list(_BLOCKS - {"p"})):
            prefix = "- " if name == "li" else ""
            out.append(prefix + _text(child))
        else:
            _render(child, out)


def convert(page: str) -> str:
    """One documentation page as Markdown."""
    soup = BeautifulSoup((SOURCE / f"{page}.html").read_text(encoding="utf-8"), "html.parser")
    body = soup.find("div", attrs={"role": "main"}) or soup.body
    assert isinstance(body, Tag)
    out: list[str] = []
    _render(body, out)
    return "\n\n".join(part for part in out if part.strip()) + "\n"


def main() -> None:
    """Write every page of ``PAGES`` (or the pages named on the command line)."""
    OUT.mkdir(parents=True, exist_ok=True)
    for page in sys.argv[1:] or PAGES:
        (OUT / f"python-{page}.md").write_text(convert(page), encoding="utf-8")


if __name__ == "__main__":
    main()

"""``waypoint mcp`` over stdio with a scripted LLM in place of the configured one, for the stdio tests.

Run as a script (the SDK's client starts it as a subprocess): settings come from ``WAYPOINT_*`` variables;
``--api-key`` / ``--tenant`` as for ``waypoint mcp``.
"""

from __future__ import annotations

import argparse
import asyncio

from interop_support import lighthouse_reply, scripted_factory

from agents.llm import ScriptedLLM
from api.mcp.serve import serve_stdio
from knowledge.settings import Settings


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--api-key")
    parser.add_argument("--tenant")
    args = parser.parse_args()
    llm = ScriptedLLM([lighthouse_reply] * 100)
    factory = scripted_factory(llm)
    asyncio.run(serve_stdio(Settings(), api_key=args.api_key, tenant=args.tenant, deps_factory=factory))


if __name__ == "__main__":
    main()

"""Waypoint's LangGraph agent.

Public entry points (others code against these):

- ``graphs.deps``: ``Deps`` and ``open_deps(settings, *, tenant, llm=None)``;
- ``graphs.runner``: ``RunRequest`` and ``stream_run(deps, request)`` (``Envelope`` stream, never raises);
- ``graphs.single_shot``: ``stream_single_shot(deps, request)``, the evals' baseline;
- ``graphs.graph``: ``build_graph(deps)``; ``graphs.studio.make_graph`` for ``langgraph dev``.
"""

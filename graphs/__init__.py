"""Waypoint's LangGraph agent.

Public entry points (others code against these):

- ``graphs.services``: ``open_services(settings)``, the composition root, and ``open_deps(settings, *, tenant)``;
- ``graphs.deps``: ``Deps``, what one run of one tenant is given;
- ``graphs.runner``: ``RunRequest`` and ``stream_run(deps, request)`` (``Envelope`` stream, never raises);
- ``graphs.single_shot``: ``stream_single_shot(deps, request)``, the evals' baseline;
- ``graphs.graph``: ``build_graph(deps)``; ``graphs.studio.make_graph`` for ``langgraph dev``.
"""

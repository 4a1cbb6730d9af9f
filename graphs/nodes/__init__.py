"""Graph nodes: each thin, calling one role or tool and returning a partial state update."""

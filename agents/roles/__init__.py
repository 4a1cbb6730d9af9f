"""LLM roles of the agent: planner, router, grader, decider, compactor, answerer, verifier.

Each role renders its instruction from ``agents/prompts``, calls the LLM through the shared prompt
layout, and parses the reply into a pydantic model; the pure rules beside each call (keep/drop,
budgets, citations) are testable without a model.
"""

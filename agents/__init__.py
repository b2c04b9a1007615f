"""The agent wing: what the product does for agents and their runs, on top of the stages.

- `agents.checking`: check any agent's run (tool calls, tool results, final answer) with the
  guardrails' claim checker, one HallucinationReport per run (`grounding check`).
- `agents.serving`: the knowledge base served to agents as grounded tools, over HTTP (FastAPI)
  and MCP (`grounding agents serve`, `grounding mcp`).

The wing imports the stages and the Prefect-free executor; no stage imports the wing.
"""

"""Serving agents: the knowledge base as a grounded tool over HTTP and MCP.

- result.py   the grounded tool result (four states) and its OpenAI / Anthropic renderings
- agents_config.py configs/agents.yaml: instruction texts, API keys, limits
- engine.py   one question through the stages in memory; the index loaded once per process
- ground.py   any tool's raw output judged by the same stages
- auth.py     API keys -> principals; refusing a public bind without keys
- tools.py    tool declarations (JSON Schema) for OpenAI, Anthropic and MCP
- http_api.py FastAPI app (`grounding api`); mcp_server.py (`grounding mcp`)
- agent.py    the reference agent loop (`grounding agent`)

The commands that start them (`grounding api | mcp | tools | agent`) are in `cli/agents.py`.
"""

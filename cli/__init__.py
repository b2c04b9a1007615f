"""The `grounding` command line: the Typer app (`cli.app`) and one module per command group.

The commands parse options, call the flows, the stages, the agent wing or the quality loop, and
format what those return for a person or a script; nothing below this package imports it.
"""

"""`python -m cli`: the `grounding` command without its installed entry point."""

from cli.app import app

app(prog_name="grounding")

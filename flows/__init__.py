"""Prefect wiring and the `grounding` CLI.

Stages know nothing of Prefect; only this package does.
"""

from stages.common.offline import apply_offline_environment

apply_offline_environment()

"""The scripts that build the project's data and fit or train its models.

Each is run from the repository root as `python -m scripts.NAME` (or `python scripts/NAME.py`
once `make setup` has installed the project); a model card names the script and command that
made its model.
"""

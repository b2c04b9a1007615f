"""The release evaluation, beside the frozen sets it scores (sets/, baseline/, gate.yaml).

Import its modules by name (`from eval.metrics import ...`, `from eval import release_gate`): the
package is called after its folder, and a bare `import eval` would hide the builtin `eval`.
Nothing here imports Prefect; `flows/evaluation.py` is the Prefect flow, `cli/eval.py` the CLI.
"""

"""The eight pipeline stages, their shared contracts and the content-addressed artifact store.

Importing this package applies the offline environment (see `stages.common.offline`).
"""

from stages.common.offline import apply_offline_environment

apply_offline_environment()

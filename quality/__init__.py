"""The quality loop around the pipeline: what it measures about itself over time and how a
candidate configuration is tried before it replaces the current one.

- `quality.ledger`: every run's metrics, one row per run and metric, in the store;
- `quality.drift`: control bands and alarms against a baseline window (PSI, rate tests);
- `quality.trend`: the ledger as a table and a PNG, and the nightly check;
- `quality.shadow`: shadow runs of a candidate config, their reports and promotion records.
"""

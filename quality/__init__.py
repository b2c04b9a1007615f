"""The quality loop around a deployed pipeline: human review of sampled answers, the
guardrails' efficacy measured from those verdicts and the gate recalibrated on them; what the
pipeline measures about itself over time, and how a candidate configuration is tried before it
replaces the current one.

- `quality.review`: stratified samples of a run into review batches (store artifacts), the
  reviewers' verdicts (append-only JSONL per reviewer) and their import from CSV / JSONL;
- `quality.review_page`: the local review page (FastAPI, loopback, no asset from the network);
- `quality.efficacy`: the efficacy report with 95 % intervals under the sampling weights;
- `quality.calibrate`: the gate's lines refitted on verdicts, written as an overlay config;
- `quality.ledger`: every run's metrics, one row per run and metric, in the store;
- `quality.drift`: control bands and alarms against a baseline window (PSI, rate tests);
- `quality.trend`: the ledger as a table and a PNG, and the nightly check;
- `quality.shadow`: shadow runs of a candidate config, their reports and promotion records.
"""

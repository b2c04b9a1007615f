"""The operations loop around a deployed pipeline: human review of sampled answers, the
guardrails' efficacy measured from those verdicts, and the gate recalibrated on them.

- `quality.review`: stratified samples of a run into review batches (store artifacts), the
  reviewers' verdicts (append-only JSONL per reviewer) and their import from CSV / JSONL;
- `quality.review_page`: the local review page (FastAPI, loopback, no asset from the network);
- `quality.efficacy`: the efficacy report with 95 % intervals under the sampling weights;
- `quality.calibrate`: the gate's lines refitted on verdicts, written as an overlay config.
"""

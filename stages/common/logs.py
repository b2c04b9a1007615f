"""Structured logging: every line carries the run and (inside a question) the question it is about.

Context lives in contextvars, so it follows the code that sets it (a run, a stage, one question's
loop body) without being threaded through function arguments, and stages stay pure: they only
call `logging.getLogger(__name__)` and `question_scope(qid)`. The flows decide the output format
(`configure`): readable text, or one JSON object per line for log shippers.

Stdlib only (no flows or Prefect import), so stages may use it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
import sys
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any, Literal

LogFormat = Literal["text", "json"]
FORMAT_ENV = "GROUNDING_LOG_FORMAT"
LEVEL_ENV = "GROUNDING_LOG_LEVEL"
RUN_ID_ENV = "GROUNDING_RUN_ID"
# The project's own loggers follow --log-level; third-party libraries stay at WARNING, because
# e.g. sentence-transformers draws tqdm bars on stderr when its logger is at INFO.
PROJECT_LOGGERS = ("stages", "flows", "grounding", "quality")
CONTEXT_FIELDS = ("run_id", "question_id", "stage")

_run_id: ContextVar[str | None] = ContextVar("run_id", default=None)
_question_id: ContextVar[str | None] = ContextVar("question_id", default=None)
_stage: ContextVar[str | None] = ContextVar("stage", default=None)

# Attributes every LogRecord has; anything else on a record came from `extra=` and is emitted.
_STANDARD_ATTRS = set(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "taskName"}


# ---------------------------------------------------------------- context


def current_context() -> dict[str, str | None]:
    return {"run_id": current_run_id(), "question_id": _question_id.get(), "stage": _stage.get()}


def current_run_id() -> str | None:
    """The run id in scope; a process started for a run (e.g. a Prefect subprocess) inherits it
    through GROUNDING_RUN_ID."""
    return _run_id.get() or os.environ.get(RUN_ID_ENV) or None


def set_run_id(run_id: str | None) -> None:
    """For the CLI: one run per process, so no scope to close."""
    _run_id.set(run_id)


@contextlib.contextmanager
def _scoped(var: ContextVar[str | None], value: str | None) -> Iterator[None]:
    token = var.set(value)
    try:
        yield
    finally:
        var.reset(token)


def run_scope(run_id: str | None) -> contextlib.AbstractContextManager[None]:
    return _scoped(_run_id, run_id)


def question_scope(question_id: str | None) -> contextlib.AbstractContextManager[None]:
    return _scoped(_question_id, question_id)


def stage_scope(stage: str | None) -> contextlib.AbstractContextManager[None]:
    return _scoped(_stage, stage)


def set_stage(stage: str | None) -> None:
    """For event listeners that see 'start' and 'done' as separate calls."""
    _stage.set(stage)


# ---------------------------------------------------------------- formatting


class ContextFilter(logging.Filter):
    """Stamps run_id / question_id / stage on each record unless the caller passed them."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, value in current_context().items():
            if getattr(record, name, None) is None:
                setattr(record, name, value)
        return True


def _extras(record: logging.LogRecord) -> dict[str, Any]:
    return {
        k: v
        for k, v in record.__dict__.items()
        if k not in _STANDARD_ATTRS and k not in CONTEXT_FIELDS and not k.startswith("_")
    }


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, run_id, question_id, stage, and
    any `extra=` fields (Prefect's flow_run_id, a stage's seconds…)."""

    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, Any] = {
            "time": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in CONTEXT_FIELDS:
            payload[name] = getattr(record, name, None)
        for key, value in _extras(record).items():
            payload.setdefault(key, value)
        if record.exc_info:
            payload["exception"] = self.formatException(record.exc_info)
        return json.dumps(payload, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """`time level logger [run=… q=… stage=…] message`, naming only the context that is set."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s %(context)s%(message)s")

    def format(self, record: logging.LogRecord) -> str:
        labels = {"run_id": "run", "question_id": "q", "stage": "stage"}
        parts = [f"{labels[n]}={getattr(record, n)}" for n in labels if getattr(record, n, None)]
        record.context = f"[{' '.join(parts)}] " if parts else ""
        return super().format(record)


def make_handler(log_format: LogFormat, stream=None) -> logging.Handler:
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    handler.addFilter(ContextFilter())
    handler.set_name("grounding")
    return handler


def _is_console(handler: logging.Handler) -> bool:
    """Handlers that print to a terminal: a plain StreamHandler, ours, or Prefect's console and
    debug handlers (its rich console handler would also wrap long lines). API handlers that ship
    logs to a Prefect server, files and test-capture handlers are left alone."""
    if handler.get_name() == "grounding" or type(handler) is logging.StreamHandler:
        return True
    return isinstance(handler, logging.StreamHandler) and type(handler).__module__.startswith(
        "prefect."
    )


def configure(log_format: LogFormat | None = None, level: str | None = None, stream=None) -> None:
    """Route every console log line through one handler in the chosen format.

    Replaces console handlers on the root logger and on loggers that do not propagate (Prefect's
    own), so that in JSON mode no line on stderr is anything but JSON. Defaults come from
    GROUNDING_LOG_FORMAT / GROUNDING_LOG_LEVEL, which are exported so that subprocesses
    (Prefect's flow-run processes) log the same way.
    """
    log_format = (log_format or os.environ.get(FORMAT_ENV) or "text").lower()  # type: ignore[assignment]
    if log_format not in ("text", "json"):
        raise ValueError(f"log format must be text or json, got {log_format!r}")
    level = (level or os.environ.get(LEVEL_ENV) or "WARNING").upper()
    os.environ[FORMAT_ENV], os.environ[LEVEL_ENV] = log_format, level
    handler = make_handler(log_format, stream)
    loggers = [logging.getLogger()] + [
        logger
        for logger in logging.Logger.manager.loggerDict.values()
        if isinstance(logger, logging.Logger) and logger.handlers and not logger.propagate
    ]
    for logger in loggers:
        consoles = [h for h in logger.handlers if _is_console(h)]
        for old in consoles:
            logger.removeHandler(old)
        if consoles or logger is logging.getLogger():
            logger.addHandler(handler)
    logging.getLogger().setLevel(max(logging.getLevelName(level), logging.WARNING))
    for name in PROJECT_LOGGERS:
        logging.getLogger(name).setLevel(level)
    logging.captureWarnings(True)  # warnings.warn lines become records in the same format

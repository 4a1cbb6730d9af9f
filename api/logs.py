"""Structured logs: one JSON object per line, with the run id (and tenant, thread) when a record has one."""

from __future__ import annotations

import json
import logging
import time

_EXTRA_KEYS = ("run_id", "tenant", "thread_id", "status", "job_id")


class JSONFormatter(logging.Formatter):
    """Formats a record as JSON: ts, level, logger, message, the known extra keys, exception text."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, object] = {
            "ts": round(record.created, 3),
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key in _EXTRA_KEYS:
            value = getattr(record, key, None)
            if value is not None:
                out[key] = value
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False, default=str)


def configure_json_logging(level: int = logging.INFO) -> None:
    """Send every log record (ours, uvicorn's) to stderr as JSON lines."""
    handler = logging.StreamHandler()
    handler.setFormatter(JSONFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per LLM call is noise

"""A stand-in for an LLM answer writer: an OpenAI-compatible chat endpoint on 127.0.0.1 that
answers from the evidence it is sent, deterministically and without a model.

Each answer is the first sentence of the first evidence item, cited, followed by one sentence no
evidence states ("This applies to every customer in every region."). The guardrails see a
supported claim and an unsupported one in every answer: what a strict gate blocks and a loosened
gate lets through, so a run's block rate follows the guardrails' settings. It writes the same
answer to a revise request: the unsupported sentence stays.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

UNSUPPORTED = "This applies to every customer in every region"
EVIDENCE_LINE = re.compile(r"^\[(E\d+)\] (.+)$", re.MULTILINE)


def answer_for(prompt: str) -> dict:
    found = EVIDENCE_LINE.findall(prompt)
    if not found:
        return {"answer": None, "citations": [], "refusal_reason": None, "missing": []}
    evidence_id, text = found[0]
    first = re.split(r"(?<=[.!?])\s", text.replace(" (outdated source)", ""), maxsplit=1)[0]
    first = first.rstrip(".!? ")
    answer = f"{first} [{evidence_id}]. {UNSUPPORTED} [{evidence_id}]."
    return {"answer": answer, "citations": [evidence_id], "refusal_reason": None, "missing": []}


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - the http.server name
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        prompt = "\n".join(m.get("content") or "" for m in request.get("messages") or [])
        reply = {
            "choices": [
                {
                    "message": {"role": "assistant", "content": json.dumps(answer_for(prompt))},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": 30},
        }
        body = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:  # quiet
        pass


@contextmanager
def writer_server() -> Iterator[str]:
    """The endpoint's base URL (…/v1) while the block runs."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()

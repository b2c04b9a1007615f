"""The review page in headless Chromium, driven over the DevTools protocol: open it, judge
three answers by keyboard, reload, and the verdicts are still there (on the page and on disk).
Skips without a browser (.ci/run installs Debian's chromium)."""

from __future__ import annotations

import itertools
import json
import re
import shutil
import socket
import subprocess
import threading
import time

import pytest

from quality import review, review_page
from stages.store import ArtifactStore
from tests.review_support import make_run

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Page:
    """One tab of a headless browser, over the DevTools protocol's flat sessions."""

    def __init__(self, browser: str, profile, url: str) -> None:
        from websockets.sync.client import connect

        self.process = subprocess.Popen(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-extensions",
                f"--user-data-dir={profile}",
                "--remote-debugging-port=0",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        endpoint = None
        deadline = time.time() + 60
        while endpoint is None and time.time() < deadline:
            line = self.process.stderr.readline()
            if found := re.search(r"(ws://\S+)", line):
                endpoint = found.group(1)
        assert endpoint, "the browser printed no DevTools address"
        self.socket = connect(endpoint, max_size=None, open_timeout=30)
        self.ids = itertools.count(1)
        target = self.call("Target.createTarget", url=url)["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]

    def call(self, method: str, session: str | None = None, **params) -> dict:
        number = next(self.ids)
        message = {"id": number, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        self.socket.send(json.dumps(message))
        while True:
            reply = json.loads(self.socket.recv(timeout=60))
            if reply.get("id") == number:
                assert "error" not in reply, reply
                return reply.get("result", {})

    def evaluate(self, expression: str):
        result = self.call(
            "Runtime.evaluate", self.session, expression=expression, returnByValue=True
        )
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if value := self.evaluate(expression):
                return value
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {expression}")

    def key(self, key: str) -> None:
        for kind in ("keyDown", "keyUp"):
            extra = {"text": "\r" if key == "Enter" else key} if kind == "keyDown" else {}
            if key == "Enter":
                extra.update(code="Enter", windowsVirtualKeyCode=13)
            self.call("Input.dispatchKeyEvent", self.session, type=kind, key=key, **extra)

    def reload(self) -> None:
        self.call("Page.reload", self.session)

    def close(self) -> None:
        try:
            self.socket.close()
        finally:
            self.process.terminate()
            self.process.wait(timeout=30)


@pytest.fixture
def served(tmp_path):
    import uvicorn

    store = ArtifactStore(tmp_path / "store")
    run = make_run(tmp_path / "runs")
    config = review.SampleConfig(n=8, seed=1)
    ref = review.write_batch(store, review.draw(review.items_from_run(run), config), config, "r")
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            review_page.app(store, ref.key, "ana"), host="127.0.0.1", port=port, log_level="error"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    yield store, ref, f"http://127.0.0.1:{port}/"
    server.should_exit = True
    thread.join(timeout=10)


def test_three_answers_judged_by_keyboard_survive_a_reload(served, tmp_path):
    browser = next((path for name in BROWSERS if (path := shutil.which(name))), None)
    if browser is None:
        pytest.skip("no headless browser: install Debian's chromium (apt-get install chromium)")
    pytest.importorskip("websockets.sync.client", reason="the DevTools client needs websockets")
    store, ref, url = served
    page = Page(browser, tmp_path / "profile", url)
    try:
        page.wait_for("document.body && document.body.dataset.ready === '1'")
        first = page.evaluate("items[at].answer_id")
        for key in ("1", "j", "2", "j", "]", "u", "3"):  # claim 1 of the third: unsupported
            page.key(key)
            time.sleep(0.15)  # each save is its own request
        page.wait_for("document.getElementById('status').textContent.startsWith('saved')")
        page.key("n")
        for char in "odd":
            page.key(char)
        page.key("Enter")
        page.wait_for("Object.keys(verdicts).length === 3 && verdicts[items[at].answer_id].note")
        page.reload()
        page.wait_for("document.body && document.body.dataset.ready === '1'")
        assert page.evaluate("document.getElementById('status').textContent") == "3 judged"
        shown = page.evaluate(
            "JSON.stringify(Object.fromEntries(Object.entries(verdicts)"
            ".map(([k, v]) => [k, [v.verdict, v.claims, v.note]])))"
        )
        after = json.loads(shown)
    finally:
        page.close()
    saved = review.read_verdicts(store, ref.key)["ana"]
    assert sorted(v["verdict"] for v in saved.values()) == [
        "correct",
        "hallucinated",
        "should_have_refused",
    ]
    assert saved[first]["verdict"] == "correct"
    assert {k: v[0] for k, v in after.items()} == {k: v["verdict"] for k, v in saved.items()}
    third = next(v for v in saved.values() if v["verdict"] == "should_have_refused")
    assert third["note"] == "odd"
    assert after[third["answer_id"]][1] in ({"1": "unsupported"}, {"0": "unsupported"})

"""A request past its deadline frees the model: the in-process llama.cpp while it reads the
prompt and while it generates, an OpenAI-compatible server over a real loopback socket, the
agent-run check's judge loop; and the memory the loaded model keeps (bounded prompt cache,
the GGUF's pages released after repacking)."""

from __future__ import annotations

import json
import mmap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from stages.models import chat


class PromptReadingServer:
    """A stand-in for xllamacpp's Server reading a long prompt in chunks: with
    `return_progress` it calls back once per chunk (as llama.cpp does per batch), then streams
    tokens; a callback returning True cancels the task."""

    def __init__(self, chunks: int, seconds_per_chunk: float) -> None:
        self.chunks, self.pace = chunks, seconds_per_chunk
        self.read = 0
        self.requests: list[dict] = []

    def handle_chat_completions(self, request, callback=None):
        self.requests.append(request)
        for done in range(self.chunks):
            time.sleep(self.pace)
            self.read += 1
            if request.get("return_progress"):
                progress = {"total": self.chunks * 64, "processed": (done + 1) * 64}
                if callback({"choices": [], "prompt_progress": progress}):
                    return None
        chunk = {"choices": [{"delta": {"content": "{}"}, "finish_reason": "stop"}]}
        callback(chunk)
        return None


def _client(monkeypatch, server) -> chat.LlamaCppClient:
    client = chat.LlamaCppClient.__new__(chat.LlamaCppClient)
    client.params = {"temperature": 0.0, "max_tokens": 8, "seed": 0}
    monkeypatch.setattr(chat.LlamaCppClient, "server", property(lambda self: server))
    return client


def test_a_request_stopped_while_the_prompt_is_read_frees_the_model_after_that_chunk(
    monkeypatch,
):
    server = PromptReadingServer(chunks=40, seconds_per_chunk=0.05)
    client = _client(monkeypatch, server)
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    started = time.monotonic()
    with chat.stop_when(stop), pytest.raises(chat.Cancelled):
        client.complete([{"role": "user", "content": "a long prompt"}], {})
    assert time.monotonic() - started < 0.3 + 0.5
    assert server.read < 15  # of 40 chunks: it stopped reading, not after the whole prompt
    assert server.requests[0]["return_progress"] is True and server.requests[0]["stream"]
    # progress chunks carry no text: an unstopped call's reply is the tokens alone
    whole = PromptReadingServer(chunks=3, seconds_per_chunk=0.0)
    client = _client(monkeypatch, whole)
    with chat.stop_when(threading.Event()):
        assert client.complete([{"role": "user", "content": "q"}], {}).text == "{}"


def test_a_serving_process_reads_prompts_in_chunks_and_bounds_the_prompt_cache(tmp_path):
    params = chat.server_params("m.gguf", 1024, None)
    assert params.cache_ram_mib == chat.PROMPT_RAM_CACHE_MIB  # not llama.cpp's 8 GiB
    assert params.n_batch == 2048  # a batch run keeps llama.cpp's default
    chunked = chat.server_params("m.gguf", 1024, None, n_batch=64)
    assert chunked.n_batch == 64 and chunked.n_ubatch <= 64
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    try:
        chat.read_prompts_in_chunks(chat.SERVING_PROMPT_CHUNK)
        served = chat.LlamaCppClient(gguf, model_sha256=None)
    finally:
        chat.read_prompts_in_chunks(None)
    assert served._load_args[-3:] == (chat.SERVING_PROMPT_CHUNK, True, True)  # mapped
    batch = chat.LlamaCppClient(gguf, model_sha256=None)._load_args
    assert batch[-3:] == (None, False, True)  # repacked in a batch process: read, not mapped
    plain = chat.LlamaCppClient(gguf, model_sha256=None, repack_weights=False)._load_args
    assert plain[-3:] == (None, True, False)  # nothing copied: mapped, all of it shared
    read = chat.server_params("m.gguf", 1024, None, map_weights=False)
    assert read.load_mode != chat.server_params("m.gguf", 1024, None).load_mode


def _mapping_rss_kb(path: Path) -> int:
    """Resident kB of this process's mappings of `path` (/proc/self/smaps)."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and len(fields) >= 5 and fields[0][0] in "0123456789abcdef":
            inside = len(fields) >= 6 and fields[5] == str(path)
        elif inside and fields[0] == "Rss:":
            total += int(fields[1])
    return total


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="needs Linux /proc")
def test_released_pages_of_a_read_only_mapping_leave_rss_and_read_back_the_same(tmp_path):
    path = (tmp_path / "weights.bin").resolve()
    data = bytes(range(256)) * (4 * 4096)  # 4 MiB
    path.write_bytes(data)
    with path.open("rb") as handle:
        mapped = mmap.mmap(handle.fileno(), 0, prot=mmap.PROT_READ)
        try:
            assert mapped[:] == data  # every page read: resident
            assert _mapping_rss_kb(path) >= 4000
            assert chat.release_file_pages(str(path)) >= len(data)
            assert _mapping_rss_kb(path) < 100
            assert mapped[:] == data  # faulted back in from the file, unchanged
            assert chat.release_file_pages(str(tmp_path / "other.bin")) == 0
        finally:
            mapped.close()


# ---------------------------------------------------------------- OpenAI-compatible server


class FakeOpenAI(BaseHTTPRequestHandler):
    """/chat/completions on loopback: `mode` silent (reads the prompt for 10 s, sends nothing),
    slow (streams a token every 50 ms for 10 s) or quick (five tokens and [DONE])."""

    mode = "quick"
    gone: list[str] = []  # what the server saw when the client left
    bodies: list[dict] = []

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).bodies.append(body)
        if not body.get("stream"):  # a plain call: the whole reply at once
            reply = {"choices": [{"message": {"content": "{}"}, "finish_reason": "stop"}]}
            raw = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)
            return
        if self.mode == "silent":
            self.connection.settimeout(10)
            try:
                if self.connection.recv(1) == b"":  # the client shut its side: stop reading
                    type(self).gone.append("silent")
            except OSError:
                type(self).gone.append("silent")
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        tokens = 5 if self.mode == "quick" else 200
        try:
            for i in range(tokens):
                last = i == tokens - 1
                choice = {"delta": {"content": "a"}, "finish_reason": "stop" if last else None}
                chunk = {"choices": [choice]}
                if last:
                    chunk["usage"] = {"prompt_tokens": 7, "completion_tokens": tokens}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
                if self.mode == "slow":
                    time.sleep(0.05)
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except OSError:
            type(self).gone.append(f"slow after {i} tokens")


@pytest.fixture
def fake_openai():
    FakeOpenAI.gone, FakeOpenAI.bodies = [], []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), FakeOpenAI)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _wait_for(condition, seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)
    return condition()


@pytest.mark.parametrize("mode", ["silent", "slow"])
def test_the_openai_compatible_backend_closes_its_stream_when_stopped(fake_openai, mode):
    FakeOpenAI.mode = mode
    client = chat.OpenAICompatibleClient(fake_openai, "m", http_retries=0, timeout_s=30)
    stop = threading.Event()
    threading.Timer(0.4, stop.set).start()
    started = time.monotonic()
    with chat.stop_when(stop), pytest.raises(chat.Cancelled):
        client.complete([{"role": "user", "content": "q"}], {"type": "object"})
    assert time.monotonic() - started < 0.4 + 1.0
    assert _wait_for(lambda: FakeOpenAI.gone), "the server never saw the client leave"
    assert FakeOpenAI.bodies[0]["stream"] is True
    client.close()


def test_the_openai_compatible_backend_reads_a_whole_stream_when_not_stopped(fake_openai):
    FakeOpenAI.mode = "quick"
    client = chat.OpenAICompatibleClient(fake_openai, "m", http_retries=0)
    with chat.stop_when(threading.Event()):
        reply = client.complete([{"role": "user", "content": "q"}], {"type": "object"})
    assert reply.text == "aaaaa" and reply.finish_reason == "stop"
    assert (reply.tokens_prompt, reply.tokens_completion) == (7, 5)
    plain = client.complete([{"role": "user", "content": "q"}], {"type": "object"})
    assert FakeOpenAI.bodies[-1].get("stream") is None and plain.text == "{}"  # not streamed
    client.close()


def test_a_stopped_call_does_not_sit_out_a_retry_backoff():
    import httpx

    def busy(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, headers={"Retry-After": "20"}, text="busy")

    client = chat.OpenAICompatibleClient(
        "http://127.0.0.1:9/v1", "m", transport=httpx.MockTransport(busy), http_retries=3
    )
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    started = time.monotonic()
    with chat.stop_when(stop), pytest.raises(chat.Cancelled):
        client.complete([{"role": "user", "content": "q"}], {})
    assert time.monotonic() - started < 1.3


# ---------------------------------------------------------------- the agent-run check


def test_the_check_stops_its_judge_between_claims_and_gives_up_its_turn(monkeypatch):
    from agents.checking import check as agent_check
    from agents.serving import http_api

    judged: list[int] = []

    def slow_check(run, config, toolkit=None):
        """A judge loop: one model call per claim, each 0.05 s."""
        for claim in range(100):
            chat.raise_if_cancelled()  # what every model call does first
            time.sleep(0.05)
            judged.append(claim)
        return {"claims": len(judged)}

    monkeypatch.setattr(agent_check, "check_run", slow_check)
    monkeypatch.setattr(agent_check, "make_toolkit", lambda config: object())
    check_run = http_api.make_checker({})
    assert check_run is not None
    stop = threading.Event()
    outcome: list[BaseException] = []

    def first() -> None:
        try:
            check_run({"question": "q"}, stop)
        except chat.Cancelled as exc:
            outcome.append(exc)

    worker = threading.Thread(target=first)
    worker.start()
    time.sleep(0.3)
    waiting = threading.Event()
    waiting.set()  # a second check whose caller already gave up while the first holds the turn
    started = time.monotonic()
    with pytest.raises(chat.Cancelled):
        check_run({"question": "q"}, waiting)
    assert time.monotonic() - started < 0.5
    stop.set()
    stopped_at = time.monotonic()
    worker.join(5)
    assert outcome and time.monotonic() - stopped_at < 1.0 and len(judged) < 30
    judged.clear()
    assert check_run({"question": "q"}) == {"claims": 100}  # no flag: runs to the end


def test_the_pair_scorer_refuses_to_score_for_a_stopped_request():
    from stages.models import onnx_pairs

    scorer = onnx_pairs.OnnxPairScorer.__new__(onnx_pairs.OnnxPairScorer)
    scorer._memo, scorer._lock = {("q", "p"): 1.5}, threading.Lock()
    assert scorer.score([("q", "p")]).tolist() == [1.5]
    stopped = threading.Event()
    stopped.set()
    with chat.stop_when(stopped), pytest.raises(chat.Cancelled):
        scorer.score([("q", "p")])


class JudgeServer:
    """A stand-in for xllamacpp's Server answering a one-token judge prompt: `chunks` prompt
    chunks (progress callbacks when asked), then the token with its top log-probabilities, as
    llama.cpp streams a completion."""

    TOP = [{"token": "Yes", "logprob": -0.02}, {"token": "No", "logprob": -4.2}]

    def __init__(self, chunks: int, seconds_per_chunk: float) -> None:
        self.chunks, self.pace, self.read = chunks, seconds_per_chunk, 0
        self.streamed: list[bool] = []

    def handle_completions(self, request, callback=None):
        self.streamed.append(bool(request.get("stream")))
        token = {"token": "Yes", "logprob": -0.02, "top_logprobs": self.TOP}
        for _ in range(self.chunks):
            time.sleep(self.pace)
            self.read += 1
            if request.get("return_progress") and callback({"prompt_progress": {"processed": 1}}):
                return None
        if not request.get("stream"):
            return {"choices": [{"text": "Yes", "logprobs": {"content": [token]}}]}
        callback({"choices": [{"text": "Yes", "logprobs": {"content": [token]}}]})
        callback({"choices": [{"text": "", "finish_reason": "length"}], "usage": {"x": 1}})
        return None


def test_the_llm_judge_reads_the_same_reply_streamed_and_stops_while_reading(monkeypatch):
    from stages.models import yesno

    server = JudgeServer(chunks=3, seconds_per_chunk=0.0)
    plain = chat.stoppable_completion(server, {"prompt": "p", "max_tokens": 1})
    with chat.stop_when(threading.Event()):
        streamed = chat.stoppable_completion(server, {"prompt": "p", "max_tokens": 1})
    assert server.streamed == [False, True]
    top = streamed["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
    assert top == plain["choices"][0]["logprobs"]["content"][0]["top_logprobs"] == server.TOP
    assert streamed["choices"][0]["finish_reason"] == "length"

    slow = JudgeServer(chunks=40, seconds_per_chunk=0.05)
    judge = yesno.LlamaYesNo.__new__(yesno.LlamaYesNo)
    judge.settings = chat.LLMSettings()
    monkeypatch.setattr(judge, "_ready", lambda: slow)
    monkeypatch.setattr(yesno, "prime_prefix", lambda server, prefix: "off")
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    started = time.monotonic()
    with chat.stop_when(stop), pytest.raises(chat.Cancelled):  # not a recorded judge failure
        judge.p_yes("system", "claim")
    assert time.monotonic() - started < 0.8 and slow.read < 15


def test_searches_wait_for_a_turn_and_a_stopped_one_stops_waiting():
    from agents.serving.agents_config import Limits
    from agents.serving.engine import Engine

    assert Limits().search_concurrency == 2
    engine = Engine.__new__(Engine)
    engine._searching = threading.BoundedSemaphore(1)
    stop = threading.Event()
    with engine.search_turn():
        threading.Timer(0.2, stop.set).start()
        started = time.monotonic()
        with pytest.raises(chat.Cancelled), engine.search_turn(stop):
            pass
        assert 0.15 < time.monotonic() - started < 0.6
    with engine.search_turn(threading.Event()):  # the turn was given back
        pass


class ScriptedStream:
    """A stand-in for xllamacpp's Server that streams a fixed list of chunks to the callback,
    stopping when the callback says so; it counts the chunks it sent."""

    def __init__(self, chunks: list) -> None:
        self.chunks, self.sent = chunks, 0

    def _stream(self, request, callback=None):
        assert request["stream"] and request["return_progress"]
        for chunk in self.chunks:
            self.sent += 1
            if callback(chunk):
                return None
        return None

    handle_chat_completions = handle_completions = _stream


def test_one_streaming_loop_reads_chat_and_completion_replies_and_stops_at_an_error():
    progress = {"choices": [], "prompt_progress": {"processed": 32}}
    usage = {"prompt_tokens": 5, "completion_tokens": 2}
    chat_chunks = [
        progress,
        {"choices": [{"delta": {"content": '{"a"'}}]},
        {"choices": [{"delta": {"content": ": 1}"}, "finish_reason": "stop"}], "usage": usage},
    ]
    with chat.stop_when(threading.Event()):
        reply = chat._streamed_chat(
            ScriptedStream(chat_chunks), {"messages": []}, threading.Event()
        )
    assert reply["choices"][0] == {
        "message": {"role": "assistant", "content": '{"a": 1}'},
        "finish_reason": "stop",
    }
    assert reply["usage"] == usage
    completion_chunks = [
        progress,
        {"choices": [{"text": "Y", "logprobs": {"content": [{"token": "Y"}]}}]},
        {"choices": [{"text": "es", "finish_reason": "length"}], "timings": {"prompt_n": 5}},
    ]
    with chat.stop_when(threading.Event()):
        reply = chat.stoppable_completion(ScriptedStream(completion_chunks), {"prompt": "p"})
    assert reply["choices"][0] == {
        "text": "Yes",
        "logprobs": {"content": [{"token": "Y"}]},
        "finish_reason": "length",
    }
    assert reply["timings"] == {"prompt_n": 5}
    # llama.cpp's error mid-stream ends the stream there and is the reply, for server_reply
    failing = ScriptedStream([{"error": {"message": "prompt too long"}}, completion_chunks[1]])
    with chat.stop_when(threading.Event()):
        reply = chat.stoppable_completion(failing, {"prompt": "p"})
    assert reply == {"error": {"message": "prompt too long"}} and failing.sent == 1
    with pytest.raises(chat.LLMError, match="prompt too long"):
        chat.server_reply(reply, "evaluation")


def test_the_streaming_loop_stops_at_the_next_chunk_once_stopped():
    stop = threading.Event()
    seen: list[dict] = []

    def take(choice: dict) -> None:
        seen.append(choice)
        stop.set()  # the deadline passes while the first token arrives

    tokens = [{"choices": [{"text": str(n)}]} for n in range(5)]
    server = ScriptedStream(tokens)
    with pytest.raises(chat.Cancelled):
        chat.streamed_reply(server.handle_completions, {"prompt": "p"}, stop, take)
    assert len(seen) == 1 and server.sent == 2  # the next chunk's callback cancelled the task


def _rss_anon_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_trimming_the_heap_hands_freed_memory_back_that_free_alone_keeps():
    blocks = [bytearray(4000) for _ in range(16000)]  # 64 MB of chunks below mmap's threshold
    pin = bytearray(4000)  # allocated above them, so the heap's top cannot simply shrink
    held = _rss_anon_mb()
    del blocks
    assert _rss_anon_mb() > held - 16  # freed, yet still resident in malloc's heap
    assert chat.trim_heap()
    assert _rss_anon_mb() < held - 32
    assert len(pin) == 4000

"`tinybook llm serve` (09c) on a loopback port: through the official `openai` client, and under load from 8 clients at once."
import json, socket, subprocess, sys, time, concurrent.futures as cf
import pytest
openai, httpx = pytest.importorskip("openai"), pytest.importorskip("httpx")
pytest.importorskip("fastapi"); pytest.importorskip("uvicorn")
from tinybook.llm.model import Transformer, generate, generate_text, random_llama
from tinybook.llm.tokenizer import Tokenizer

KEY, CTX = "test-key", 512

@pytest.fixture(scope="module")
def served(tmp_path_factory):
    "A server for a tiny random model, started here and stopped after; the same model loaded here computes the expected answers."
    with pytest.MonkeyPatch.context() as mp:  # both on the CPU, whatever an earlier test left in DEV (importing tinygrad sets DEV=CL)
        mp.setenv("DEV", "CPU"); yield from _served(tmp_path_factory)
def _served(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("serve") / "tiny.gguf"); random_llama(path, ctx=1024)
    with socket.socket() as s: s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
    cmd = [sys.executable, "-c", "from tinybook.cli import main; main()", "llm", "serve", path, "--port", str(port), "--api-key", KEY, "--ctx", str(CTX)]
    proc, url = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True), f"http://127.0.0.1:{port}"
    try:
        for _ in range(1200):
            if proc.poll() is not None: raise RuntimeError(f"the server exited: {proc.stdout.read()}")
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200: break
            except httpx.HTTPError: time.sleep(0.1)
        else: raise TimeoutError("the server did not answer /health within 2 minutes")
        tok, model = Tokenizer.from_gguf(path), Transformer.from_gguf(path, CTX)[0]
        expect = lambda ids, n: "".join(generate_text(model, tok, ids, n))  # greedy, as temperature 0 asks
        yield url, path, tok, expect, openai.OpenAI(base_url=url + "/v1", api_key=KEY, max_retries=0, timeout=120), model
    finally: proc.terminate(); proc.wait(20)

def test_models_and_health(served):
    url, path, _, _, client, _ = served
    assert [m.id for m in client.models.list().data] == [path]
    assert httpx.get(url + "/health").json() == {"status": "ok", "slots_idle": 4, "slots_processing": 0}  # public: no key needed

def test_chat(served):
    _, path, tok, expect, client, _ = served
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Tell me about llamas"}]
    want = expect(tok.chat(msgs), 12)
    r = client.chat.completions.create(model=path, messages=msgs, max_tokens=12, temperature=0)
    assert (r.choices[0].message.content, r.choices[0].finish_reason, r.usage.completion_tokens) == (want, "length", 12)
    assert r.usage.prompt_tokens == len(tok.chat(msgs)) and r.usage.total_tokens == r.usage.prompt_tokens + 12
    chunks = list(client.chat.completions.create(model=path, messages=msgs, max_tokens=12, temperature=0, stream=True,
                                                 stream_options={"include_usage": True}))
    assert chunks[0].choices[0].delta.role == "assistant" and chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 12
    assert "".join(c.choices[0].delta.content or "" for c in chunks[:-1]) == want and chunks[-2].choices[0].finish_reason == "length"

def test_completions(served):
    _, path, tok, expect, client, _ = served
    want = expect(tok.encode("Once upon a time"), 10)
    r = client.completions.create(model=path, prompt="Once upon a time", max_tokens=10, temperature=0, n=2)
    assert [c.text for c in r.choices] == [want, want] and r.usage.completion_tokens == 20
    text = "".join(c.choices[0].text for c in client.completions.create(model=path, prompt="Once upon a time", max_tokens=10, temperature=0, stream=True))
    assert text == want

def test_stop_and_logprobs(served):
    _, path, tok, expect, client, _ = served
    msgs = [{"role": "user", "content": "Count to three"}]
    want = expect(tok.chat(msgs), 16)
    stop = want[5:8]  # cut where the text first has it (a stop string may span tokens)
    r = client.chat.completions.create(model=path, messages=msgs, max_tokens=16, temperature=0, stop=[stop], logprobs=True, top_logprobs=3)
    assert r.choices[0].message.content == want[:want.index(stop)] and r.choices[0].finish_reason == "stop"
    lp = r.choices[0].logprobs.content
    assert lp and all(len(e.top_logprobs) == 3 and e.top_logprobs[0].logprob >= e.logprob - 1e-6 for e in lp)  # greedy: the top token

def test_errors_keep_the_server_up(served):
    url, path, _, _, client, _ = served
    with pytest.raises(openai.NotFoundError): client.chat.completions.create(model="gpt-4", messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(openai.BadRequestError) as e: client.completions.create(model=path, prompt="x" * (CTX + 10))
    assert e.value.body["code"] == "context_length_exceeded" and e.value.body["param"] == "prompt"
    with pytest.raises(openai.AuthenticationError): openai.OpenAI(base_url=url + "/v1", api_key="wrong", max_retries=0).models.list()
    r = httpx.post(url + "/v1/chat/completions", content=b"{not json", headers={"Authorization": f"Bearer {KEY}"})
    assert r.status_code == 400 and r.json()["error"]["type"] == "invalid_request_error"
    assert client.completions.create(model=path, prompt="still here", max_tokens=2).usage.completion_tokens == 2

def test_load(served):
    "50 requests from 8 clients at once, a fifth of them malformed: every valid one gets its own right answer, every bad one a 4xx."
    url, path, tok, expect, _, _ = served
    H, bad = {"Authorization": f"Bearer {KEY}"}, [b"{oops", {"messages": []}, {"prompt": "a", "temperature": 5}, {"model": "nope", "prompt": "a"},
                                                 {"prompt": "a", "max_tokens": 0}]
    def request(i:int):
        if i % 5 == 4:  # malformed: raw bytes or a bad field
            b = bad[i // 5 % len(bad)]
            r = httpx.post(url + ("/v1/completions" if isinstance(b, bytes) or "prompt" in b else "/v1/chat/completions"), headers=H, timeout=120,
                           **({"content": b} if isinstance(b, bytes) else {"json": b}))
            return "bad", r.status_code, r.json()
        chat, stream, n = i % 2 == 0, i % 3 == 0, 4 + i % 5
        text = f"request {i}: tell me about the number {i * 7}"
        body = {"model": path, "max_tokens": n, "temperature": 0, "stream": stream}
        body |= {"messages": [{"role": "user", "content": text}]} if chat else {"prompt": text}
        with httpx.stream("POST", url + ("/v1/chat/completions" if chat else "/v1/completions"), json=body, headers=H, timeout=120) as r:
            if not stream: return "ok", chat, text, n, json.loads(r.read())["choices"][0]["message" if chat else "text"]
            ev = [json.loads(ln[6:]) for ln in r.iter_lines() if ln.startswith("data: {")]
            return "ok", chat, text, n, "".join(c["choices"][0]["delta"].get("content", "") if chat else c["choices"][0]["text"] for c in ev if c["choices"])
    t0 = time.time()
    with cf.ThreadPoolExecutor(8) as pool: results = [f.result(timeout=300) for f in [pool.submit(request, i) for i in range(50)]]
    assert time.time() - t0 < 300 and len(results) == 50
    for r in results:
        if r[0] == "bad": assert 400 <= r[1] < 500 and set(r[2]["error"]) == {"message", "type", "param", "code"}, r
        else:
            _, chat, text, n, got = r
            got = got["content"] if chat and isinstance(got, dict) else got
            assert got == expect(tok.chat([{"role": "user", "content": text}]) if chat else tok.encode(text), n), (text, got)
    assert sum(r[0] == "bad" for r in results) == 10

def test_disconnect_cancels(served):
    "A client that hangs up after a few chunks stops its generation: the cache then holds far fewer tokens than were asked for."
    url, path, tok, _, client, model = served
    ids = tok.encode("A long story:")
    with httpx.stream("POST", url + "/v1/completions", json={"model": path, "prompt": ids, "max_tokens": 480, "temperature": 0, "stream": True},
                      headers={"Authorization": f"Bearer {KEY}"}, timeout=120) as r:
        for i, _ in enumerate(r.iter_lines()):
            if i == 6: break  # three chunks (each a line and a blank), then the client hangs up
    time.sleep(1)
    full = list(generate(model, ids, 480))  # what it would have said
    r = client.completions.create(model=path, prompt=ids + full, max_tokens=1)  # the server reports how much of that its cache held
    assert len(full) > 400 and r.usage.prompt_tokens_details.cached_tokens < len(ids) + 240, r.usage

def _post(c, url, body, path="/v1/completions", **kw):
    "POST `body` (a dict as JSON, else bytes as they are) with the key."
    return c.post(url + path, headers={"Authorization": f"Bearer {KEY}"}, **({"timeout": 30} | kw),
                  **({"json": body} if isinstance(body, dict) else {"content": body}))

def _port(r) -> int: return r.extensions["network_stream"].get_extra_info("client_addr")[1]  # the connection's own port

def test_malformed_keeps_the_connection(served):
    "Each malformed request answers a 4xx in OpenAI's shape; the next request on the same keep-alive connection works."
    url = served[0]
    chat = lambda m: {"messages": [{"role": "user", "content": m}], "max_tokens": 1}
    bad = [b"[" * 100_000 + b"]" * 100_000, b'{"prompt": "a\\ud800", "max_tokens": 1}',  # deep JSON, a lone surrogate
           {"prompt": "a", "seed": -2}, {"prompt": "a", "seed": 2**63}, {"prompt": "a", "stream": "no"},
           {"prompt": "a", "stream": True, "stream_options": {"include_usage": "yes"}}, {"prompt": "a", "n": "2"},
           {"prompt": "a", "stop": {"x": 1}}, {"prompt": "a", "stop": ["x" * 257]}, {"prompt": [["a"]]},
           {"prompt": "a", "logprobs": "1"}, {"prompt": "a", "model": ["x"]}, {"prompt": "a", "stream_options": 3},
           {"prompt": "a" * (CTX * 3 + 1)}, b" " * (4 * 2**20 + 1)]
    bad_chat = [b'{"messages": [{"role": "user", "content": "\\udc00"}]}', chat([{"type": "text", "text": 5}]),
                {"messages": [{"role": ["user"], "content": "a"}]}, {"messages": {"role": "user"}},
                chat("a") | {"top_p": "1"}]
    with httpx.Client() as c:
        port = _port(_post(c, url, {"prompt": "a", "max_tokens": 1}))
        for body, path in [(b, "/v1/completions") for b in bad] + [(b, "/v1/chat/completions") for b in bad_chat]:
            r = _post(c, url, body, path)
            err = r.json()["error"]
            assert 400 <= r.status_code < 500 and set(err) == {"message", "type", "param", "code"}, (body, r.text)
            ok = _post(c, url, {"prompt": "a", "max_tokens": 1, "seed": -1})  # -1: a random seed, as llama-server's
            assert ok.status_code == 200 and _port(ok) == port, (str(body)[:60], ok.text)

def test_key_guards_every_route(served):
    "Without the key every path but /health is a 401, docs and unknown paths too; with it, an unknown path is a 404."
    url = served[0]
    for p in ("/docs", "/redoc", "/openapi.json", "/nope", "/v1/models"):
        r = httpx.get(url + p)
        assert r.status_code == 401 and r.json()["error"]["type"] == "authentication_error", (p, r.status_code)
    H = {"Authorization": f"Bearer {KEY}"}
    assert [httpx.get(url + p, headers=H).status_code for p in ("/nope", "/docs")] == [404, 200]
    assert httpx.get(url + "/health").status_code == 200

def test_bodies_over_the_limit(served):
    "A body over 4 MiB is a 413, told by its Content-Length or found while a chunked one is read, on a connection kept."
    url = served[0]
    with httpx.Client() as c:
        port = _port(_post(c, url, {"prompt": "a", "max_tokens": 1}))
        for body in (b"x" * 10**7, iter([b"x" * 2**16] * 160)):  # at once; chunked (no Content-Length)
            r = _post(c, url, body)
            assert r.status_code == 413 and r.json()["error"]["code"] == "request_too_large", r.text
        assert _port(_post(c, url, {"prompt": "a", "max_tokens": 1})) == port

def test_abandoned_plain_request_is_cancelled(served):
    "A client that leaves a long non-streaming request frees the engine at once: the next request need not wait for it."
    url, path = served[:2]
    with httpx.Client() as c:
        t0, job = time.time(), {"max_tokens": CTX, "n": 8, "temperature": 0}  # 8 choices to the end of the context
        _post(c, url, job | {"prompt": "a"}); whole = time.time() - t0
        with pytest.raises(httpx.ReadTimeout):
            _post(c, url, job | {"prompt": "b"}, timeout=whole / 8)  # the client gives up, and closes the connection
    t0 = time.time(); r = _post(httpx, url, {"prompt": "c", "max_tokens": 1})
    assert r.status_code == 200 and time.time() - t0 < whole / 4, (time.time() - t0, whole)  # not 7/8 of `whole`

def test_a_long_request_holds_one_slot(served):
    "Eight long choices run one after another in one slot: a short request sent meanwhile is answered while they still run."
    url, path = served[:2]
    with cf.ThreadPoolExecutor(1) as pool:
        long = pool.submit(_post, httpx, url, {"prompt": "a", "max_tokens": 500, "n": 8, "temperature": 0}, timeout=300)
        time.sleep(0.2)
        r = _post(httpx, url, {"prompt": "b", "max_tokens": 2})
        assert r.status_code == 200 and not long.done(), (r.status_code, long.done())  # one at a time, it would wait for all 8
        assert long.result().status_code == 200 and long.result().json()["usage"]["completion_tokens"] == 8 * 500

def test_health_under_attack(served):
    "While 10 MB bodies come (slowly, and at once) and a 1 MB stop string, /health and a small chat answer within 1 s."
    url, hi = served[0], {"messages": [{"role": "user", "content": "hi"}]}
    def slowly():
        for _ in range(160): time.sleep(0.01); yield b"x" * 2**16
    attacks = [lambda: _post(httpx, url, slowly()), lambda: _post(httpx, url, b'{"prompt": "' + b"a" * 10**7 + b'"}'),
               lambda: _post(httpx, url, hi | {"stop": ["x" * 10**6]}, "/v1/chat/completions")]
    with cf.ThreadPoolExecutor(3) as pool:
        futures = [pool.submit(a) for a in attacks]
        while not all(f.done() for f in futures):
            for probe in (lambda: httpx.get(url + "/health", timeout=5),
                          lambda: _post(httpx, url, hi | {"max_tokens": 2}, "/v1/chat/completions")):
                t0 = time.time(); assert probe().status_code == 200 and time.time() - t0 < 1, time.time() - t0
        assert [f.result().status_code for f in futures] == [413, 413, 400]

def test_a_bug_answers_500_and_keeps_the_connection():
    "An exception no handler takes (no tokenizer here) answers OpenAI's 500; the connection serves the next request."
    import threading, uvicorn
    from types import SimpleNamespace
    from tinybook.llm.serve import make_app
    app = make_app(SimpleNamespace(tok=None, model=SimpleNamespace(max_ctx=64), name="broken", jobs=None, slots=[None], ready=True))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="critical"))
    th = threading.Thread(target=server.run, daemon=True); th.start()
    try:
        while not server.started: time.sleep(0.01)
        url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
        with httpx.Client() as c:
            r = c.post(url + "/v1/completions", json={"prompt": "a"})
            err = r.json()["error"]
            assert r.status_code == 500 and err["type"] == "server_error" and "AttributeError" in err["message"], r.text
            h = c.get(url + "/health")
            assert h.status_code == 200 and _port(h) == _port(r)
    finally: server.should_exit = True; th.join(10)

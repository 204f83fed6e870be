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
    cmd = [sys.executable, "-c", "from tinybook.device import main; main()", "llm", "serve", path, "--port", str(port), "--api-key", KEY, "--ctx", str(CTX)]
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
    assert httpx.get(url + "/health").json() == {"status": "ok"}  # public: no key needed

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

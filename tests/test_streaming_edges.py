"""Leaving a stream early closes its HTTP request at once; a streamed run's trace keeps the same
reply, reasoning included, as an unstreamed one. Against real servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from minloop import Loop
from minloop.layers.streaming import TextDelta
from minloop.models.openai import OpenAIModel
from minloop.testing import ChatServer, RecordingSink, completion
from minloop.testing.sse import chunk, event


class EndlessStream:
    """Streams a word every ``gap`` seconds, up to ``words``, and notes when the client went away."""

    def __init__(self, words: int = 80, gap: float = 0.05) -> None:
        self.sent = 0
        self.gone_at: float | None = None
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    for i in range(words):
                        data = event(chunk({"content": f"词{i} "}))
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                        self.wfile.flush()
                        outer.sent += 1
                        time.sleep(gap)
                except OSError:
                    outer.gone_at = time.monotonic()

            def log_message(self, *_: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_leaving_the_stream_block_early_closes_the_http_request_at_once() -> None:
    server = EndlessStream()

    async def main() -> tuple[str, float, int, int]:
        model = OpenAIModel("m", base_url=server.base_url, api_key="sk-test")
        async with Loop(model).stream("讲个长故事") as events:
            async for e in events:
                if isinstance(e, TextDelta):
                    break  # the README's example: leave the block at the first words
        left, sent = time.monotonic(), server.sent
        await asyncio.sleep(1.0)  # the model is not closed yet: only leaving the block may stop the server
        assert events.result is not None
        gone = -1.0 if server.gone_at is None else server.gone_at - left
        status, after = events.result.status, server.sent
        await model.aclose()
        return status, gone, sent, after

    try:
        status, gone, sent, after = asyncio.run(main())
    finally:
        server.close()
    assert status == "cancelled"
    assert 0 <= gone < 0.3  # the server saw the connection close within two of its writes
    assert after - sent <= 3  # not the 20 more words of a second


REASONING = "用户问巴黎的天气;我直接回答。"
MESSAGE = {"content": "Paris: 25.", "reasoning_content": REASONING, "refusal": None, "annotations": []}
STREAM = [
    chunk({"role": "assistant", "content": "", "reasoning_content": None}),
    chunk({"reasoning_content": REASONING[:5]}),
    chunk({"reasoning_content": REASONING[5:]}),
    chunk({"content": "Paris: "}),
    chunk({"content": "25."}),
    chunk({}, "stop"),
    chunk(None, usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}),
]


def test_a_streamed_reply_keeps_its_reasoning_and_both_traces_hold_the_same_reply() -> None:
    sinks = RecordingSink(), RecordingSink()
    with ChatServer([completion(MESSAGE)]) as a, ChatServer([STREAM]) as b:
        plain = Loop(OpenAIModel("m", base_url=a.base_url, api_key="k"), sinks=[sinks[0]]).run_sync("Paris?")

        async def streamed() -> None:
            model = OpenAIModel("m", base_url=b.base_url, api_key="k")
            async with Loop(model, sinks=[sinks[1]]).stream("Paris?") as events:
                _ = [e async for e in events]
            await model.aclose()

        asyncio.run(streamed())
    responses = [[e.data["message"] for e in s.events if e.kind == "model_response"] for s in sinks]
    expected = {"role": "assistant", "content": "Paris: 25.", "reasoning_content": REASONING}
    assert responses == [[expected], [expected]]
    assert plain.output == "Paris: 25."

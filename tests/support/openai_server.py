"""A scriptable OpenAI-compatible chat server on 127.0.0.1, for tests.

It speaks ``GET /v1/models`` and ``POST /v1/chat/completions`` (plain JSON, or SSE when
the client asks for ``stream: true``: the text word by word, each tool call's arguments
in two pieces, then the usage; ``reply_text(..., chunk_delay_s=...)`` paces the chunks)
and answers each request with the next scripted reply, so a real client (LiteLLM, the
openai SDK, a whole pipeline) runs against real HTTP without a provider::

    with OpenAIServer() as server:
        server.script(
            reply_tool_calls([("get_quote", {"symbol": "MSFT"})]),
            reply_status(429, retry_after=1),
            reply_text("done"),
        )
        server.script(reply_text("from the fallback"), model="fallback-model")
        ...  # point a client at server.api_base
        assert server.requests[0].tool_names == ["get_quote"]
        server.assert_consumed()

Replies scripted for one model (``model=``) are used before the shared queue. When nothing is
scripted, ``server.responder`` (a function of the request) answers if set; otherwise the
server returns HTTP 400 saying the script is exhausted (400 so no client retries it).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "OpenAIServer",
    "ReceivedRequest",
    "Reply",
    "reply_hang",
    "reply_json",
    "reply_malformed",
    "reply_status",
    "reply_text",
    "reply_tool_calls",
]

_ids = itertools.count(1)


# -- replies ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    """One scripted answer. Build it with the ``reply_*`` helpers."""

    status: int = 200
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()
    delay_s: float = 0.0  # wait before answering (a hung provider)
    message: dict[str, Any] | None = None  # the assistant message, for success replies
    finish_reason: str = "stop"
    usage: tuple[int, int] = (0, 0)
    then: Reply | None = None  # what a hung reply finally sends
    chunk_delay_s: float = 0.0  # pause between streamed chunks

    def completion(self, model: str) -> dict[str, Any]:
        """The chat.completion object this reply stands for."""
        prompt, completion = self.usage
        return {
            "id": f"chatcmpl-test-{next(_ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": self.message, "finish_reason": self.finish_reason}],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }


def reply_text(
    text: str,
    *,
    usage: tuple[int, int] = (12, 7),
    finish_reason: str = "stop",
    chunk_delay_s: float = 0.0,
) -> Reply:
    """A plain assistant answer. ``usage`` is (prompt_tokens, completion_tokens);
    ``chunk_delay_s`` paces the chunks when it is streamed."""
    message = {"role": "assistant", "content": text}
    return Reply(
        message=message, usage=usage, finish_reason=finish_reason, chunk_delay_s=chunk_delay_s
    )


def reply_tool_calls(
    calls: Sequence[tuple[str, dict[str, Any] | str]],
    *,
    text: str | None = None,
    usage: tuple[int, int] = (20, 9),
) -> Reply:
    """An assistant turn calling tools: ``reply_tool_calls([("get_x", {"a": 1})])``.

    A string instead of a dict is sent verbatim as the arguments (to script malformed JSON).
    Call ids are ``call_1``, ``call_2``... in order of the calls in this reply.
    """
    tool_calls = [
        {
            "id": f"call_{index}",
            "type": "function",
            "function": {
                "name": name,
                "arguments": args if isinstance(args, str) else json.dumps(args),
            },
        }
        for index, (name, args) in enumerate(calls, start=1)
    ]
    message = {"role": "assistant", "content": text, "tool_calls": tool_calls}
    return Reply(message=message, usage=usage, finish_reason="tool_calls")


def reply_status(
    status: int,
    message: str | None = None,
    *,
    retry_after: float | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    """An HTTP error with an OpenAI-style error body (429, 401, 500...)."""
    kinds = {401: "invalid_api_key", 429: "rate_limit_exceeded"}
    error = {
        "message": message or f"scripted HTTP {status}",
        "type": "invalid_request_error" if status < 500 else "server_error",
        "code": kinds.get(status, str(status)),
    }
    extra = dict(headers or {})
    if retry_after is not None:
        extra["retry-after"] = f"{retry_after:g}"
    return Reply(
        status=status,
        body=json.dumps({"error": error}).encode(),
        headers=tuple(extra.items()),
    )


def reply_hang(seconds: float, then: Reply | None = None) -> Reply:
    """Say nothing for ``seconds`` (longer than the client's timeout), then send ``then``."""
    return Reply(delay_s=seconds, then=then or reply_text("too late"))


def reply_malformed(body: str = '{"id": "chatcmpl-broken", "choices": [') -> Reply:
    """A 200 whose body is not valid JSON."""
    return Reply(body=body.encode())


def reply_json(payload: Any, status: int = 200) -> Reply:
    """Any JSON body, verbatim (e.g. a completion missing a field)."""
    return Reply(status=status, body=json.dumps(payload).encode())


# -- requests ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReceivedRequest:
    """One request the server received, as the client sent it."""

    method: str
    path: str
    headers: dict[str, str]
    raw: bytes
    body: Any = None  # the parsed JSON body, None when it was not JSON

    def _get(self, key: str, default: Any = None) -> Any:
        return self.body.get(key, default) if isinstance(self.body, dict) else default

    @property
    def model(self) -> str:
        return str(self._get("model", ""))

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self._get("messages", []))

    @property
    def tools(self) -> list[dict[str, Any]]:
        return list(self._get("tools") or [])

    @property
    def tool_names(self) -> list[str]:
        return [tool["function"]["name"] for tool in self.tools]

    @property
    def response_format(self) -> dict[str, Any] | None:
        return self._get("response_format")

    @property
    def stream(self) -> bool:
        return bool(self._get("stream", False))

    @property
    def api_key(self) -> str | None:
        auth = self.headers.get("authorization", "")
        return auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None


# -- the server -------------------------------------------------------------------------------


@dataclass
class _State:
    shared: deque[Reply] = field(default_factory=deque)
    per_model: dict[str, deque[Reply]] = field(default_factory=dict)
    requests: list[ReceivedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)


Responder = Callable[[ReceivedRequest], Reply]


class OpenAIServer:
    """A real HTTP server in a background thread. Use as a context manager (or the
    ``openai_server`` fixture)."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self._state = _State()
        self.responder: Responder | None = None
        self.listings = 0  # GET requests (model lists) received
        self._httpd = ThreadingHTTPServer((host, 0), _make_handler(self))
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False  # a hung reply must not hold up shutdown
        self._thread: threading.Thread | None = None

    # -- lifecycle

    def start(self) -> OpenAIServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._state.stopping.set()  # wakes hung replies
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def api_base(self) -> str:
        """What to give a client as its base URL (``.../v1``)."""
        return f"{self.url}/v1"

    def script(self, *replies: Reply, model: str | None = None) -> OpenAIServer:
        """Queue replies, for any model or only for requests naming ``model``."""
        with self._state.lock:
            if model is None:
                self._state.shared.extend(replies)
            else:
                self._state.per_model.setdefault(model, deque()).extend(replies)
        return self

    @property
    def requests(self) -> list[ReceivedRequest]:
        """Every request received so far, oldest first."""
        with self._state.lock:
            return list(self._state.requests)

    def requests_for(self, model: str) -> list[ReceivedRequest]:
        return [r for r in self.requests if r.model == model]

    @property
    def remaining(self) -> int:
        with self._state.lock:
            return len(self._state.shared) + sum(map(len, self._state.per_model.values()))

    def assert_consumed(self) -> None:
        if self.remaining:
            raise AssertionError(f"{self.remaining} scripted replies were never requested")

    def reset(self) -> None:
        """Forget the script and the recorded requests."""
        with self._state.lock:
            self._state.shared.clear()
            self._state.per_model.clear()
            self._state.requests.clear()

    # -- used by the handler

    def _receive(self, request: ReceivedRequest) -> Reply:
        with self._state.lock:
            self._state.requests.append(request)
            queue = self._state.per_model.get(request.model)
            if queue:
                return queue.popleft()
            if self._state.shared:
                return self._state.shared.popleft()
        if self.responder is not None:
            return self.responder(request)
        return reply_status(
            400, f"openai test server: no scripted reply left for model {request.model!r}"
        )

    def _unrouted(self, request: ReceivedRequest) -> Reply:
        with self._state.lock:
            self._state.requests.append(request)
        return reply_status(404, f"openai test server: no route {request.path}")

    def _wait(self, seconds: float) -> bool:
        """Sleep unless the server stops first; True when it is stopping."""
        return self._state.stopping.wait(seconds)


def _make_handler(server: OpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

        def do_GET(self) -> None:
            # The model list, which clients (and alphadesk's pre-flight check) ask for.
            server.listings += 1
            if self.path.rstrip("/").endswith("/v1/models"):
                models = {"object": "list", "data": [{"id": "test-model", "object": "model"}]}
                self._send(reply_json(models))
            else:
                self._send(reply_status(404, f"openai test server: no route {self.path}"))

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            headers = {k.lower(): v for k, v in self.headers.items()}
            request = ReceivedRequest("POST", self.path, headers, raw, body)
            if self.path.rstrip("/").endswith("/chat/completions"):
                reply = server._receive(request)
            else:
                reply = server._unrouted(request)
            # A client that gave up (a timeout) has closed the socket: nothing to answer.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._answer(reply, request)

        def _answer(self, reply: Reply, request: ReceivedRequest) -> None:
            while reply.delay_s:
                if server._wait(reply.delay_s) or reply.then is None:
                    return
                reply = reply.then
            if reply.message is not None and request.stream:
                self._stream(reply, request.model)
            else:
                self._send(reply, request.model)

        def _send(self, reply: Reply, model: str = "") -> None:
            body = reply.body
            if reply.message is not None:
                body = json.dumps(reply.completion(model)).encode()
            self.send_response(reply.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            for name, value in reply.headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def _stream(self, reply: Reply, model: str) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.end_headers()
            for chunk in _chunks(reply.completion(model)):
                if reply.chunk_delay_s and server._wait(reply.chunk_delay_s):
                    return
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

    return Handler


def _chunks(completion: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The completion as chat.completion.chunk objects: content, tool calls, finish, usage."""
    choice = completion["choices"][0]
    message = choice["message"]
    base = {k: completion[k] for k in ("id", "created", "model")}
    base["object"] = "chat.completion.chunk"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    for word in re.findall(r"\S+\s*|\s+", message.get("content") or ""):
        yield chunk({"content": word})
    for index, call in enumerate(message.get("tool_calls") or []):
        arguments = call["function"]["arguments"]
        half = len(arguments) // 2
        head = {**call, "function": {**call["function"], "arguments": arguments[:half]}}
        yield chunk({"tool_calls": [{"index": index, **head}]})
        yield chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[half:]}}]})
    yield chunk({}, choice["finish_reason"])
    yield {**base, "choices": [], "usage": completion["usage"]}

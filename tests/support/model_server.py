"""A scriptable model server on 127.0.0.1 for tests that drive the real `openai` and
`anthropic` SDKs over real HTTP.

    with ModelServer(models=["test-model"]) as server:
        server.reply("first answer", Reply("second", model="lying-model-id"))
        provider = OpenAICompatProvider("test-model", base_url=server.openai_url)
        ...
        assert server.chat_requests[0].headers["authorization"] == "Bearer ..."

It speaks:
- OpenAI: `POST /v1/chat/completions` (streamed as SSE `data:` chunks ending in `[DONE]`, with a
  usage chunk when `stream_options.include_usage`; or one JSON body), with token logprobs when
  the request asks for them; `GET /v1/models` and `GET /v1/models/{id}`.
- Anthropic: `POST /v1/messages` (streamed as message_start, content_block_start, ping,
  content_block_delta..., content_block_stop, message_delta with usage, message_stop; or one
  JSON body); `GET /v1/models` and `GET /v1/models/{id}`. A request carrying an
  `anthropic-version` header is answered in Anthropic's shapes, any other in OpenAI's.

Scripting: answers come from the queue filled by `reply()`, else from the callable given to
`answer_with()`; a chat request with neither is refused with HTTP 400 so a test never passes on
an answer it did not script. A chat request naming a model not in `models` gets 404, as real
servers do; `retrieve_models=False` makes `GET /v1/models/{id}` a missing route (404), as on
vLLM and llama.cpp, which only list. `require_key` makes a request without that key a 401;
`logprobs_supported=False` ignores a logprobs request, as endpoints without them do.
`fail_next()`, `drop_next()`, `silence_after()` and `error_after()` inject failures into the
next chat requests;
`requests` logs every request (method, path, headers, body).

Bounded: it binds 127.0.0.1 on a free port, refuses any non-loopback peer, and `stop()` (or
leaving the `with` block) wakes every silenced handler and closes the socket.
"""

from __future__ import annotations

import json
import re
import socket
import struct
import threading
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

Api = Literal["openai", "anthropic"]

_CONTEXT = re.compile(r"<context>\s*(.*?)\s*</context>", re.DOTALL)
_CHAT_PATHS: dict[str, Api] = {"/v1/chat/completions": "openai", "/v1/messages": "anthropic"}


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it. Header names are lower-case."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw_body: bytes

    @property
    def is_chat(self) -> bool:
        return self.method == "POST" and self.path in _CHAT_PATHS


@dataclass(frozen=True)
class ChatRequest:
    """A chat request as an answering callable sees it. `messages` are the request's turns as
    sent (OpenAI's include system turns); `system` is the system text in either API."""

    api: Api
    model: str
    messages: list[dict[str, Any]]
    system: str
    stream: bool
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def last_user(self) -> str:
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return _text(message.get("content"))
        return ""

    @property
    def context(self) -> dict[str, Any] | None:
        """The JSON inside the last user turn's `<context>...</context>` block, if any."""
        found = _CONTEXT.search(self.last_user)
        if found is None:
            return None
        try:
            parsed = json.loads(found.group(1))
        except json.JSONDecodeError:
            return None
        return parsed if isinstance(parsed, dict) else None

    @property
    def role(self) -> str | None:
        """The campaign role named in the context block (`"optimizer"`, ...), if any."""
        context = self.context
        role = context.get("role") if context else None
        return role if isinstance(role, str) else None


@dataclass(frozen=True)
class Reply:
    """One scripted answer.

    `model`: the id the server reports (default: the server's `reported_model`, else the
    requested model). Token counts default to the request's word count and the number of
    streamed pieces. `tokens`: the exact pieces to stream, each with its logprob and top
    alternatives (`(piece, logprob, {alt: logprob})`); by default the text is cut into
    `chunk_chars`-character pieces, each with logprob -0.01 and made-up alternatives.
    `finish`: the finish/stop reason sent (None sends none, as a cut stream would).
    """

    text: str
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    tokens: Sequence[tuple[str, float, dict[str, float]]] | None = None
    finish: str | None = "stop"


@dataclass(frozen=True)
class _Failure:
    status: int
    message: str
    retry_after: float | None


@dataclass
class _Script:
    replies: deque[Reply] = field(default_factory=deque)
    answer: Callable[[ChatRequest], str | Reply] | None = None
    failures: deque[_Failure] = field(default_factory=deque)
    drops: int = 0
    silence_after: int | None = None
    error_after: tuple[int, str, str] | None = None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    payload = data if isinstance(data, str) else json.dumps(data)
    return f"{head}data: {payload}\n\n".encode()


class ModelServer:
    """See the module docstring. All methods are thread-safe."""

    def __init__(
        self,
        *,
        models: Iterable[str] = ("test-model",),
        reported_model: str | None = None,
        chunk_chars: int = 4,
        logprobs_supported: bool = True,
        require_key: str | None = None,
        retrieve_models: bool = True,
    ) -> None:
        self.models = list(models)
        self.retrieve_models = retrieve_models
        self.reported_model = reported_model
        self.chunk_chars = chunk_chars
        self.logprobs_supported = logprobs_supported
        self.require_key = require_key
        self._lock = threading.Lock()
        self._script = _Script()
        self._log: list[RecordedRequest] = []
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle -------------------------------------------------------------------------------

    def start(self) -> ModelServer:
        self._stopping.clear()
        handler = type("_BoundHandler", (_Handler,), {"server_model": self})
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        httpd.daemon_threads = True
        self._httpd = httpd
        # A short poll interval makes stop() return in ~50 ms instead of the default 0.5 s.
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="model-server"
        )
        self._thread.daemon = True
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the model server is not running")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        """The base URL for the OpenAI SDK (`.../v1`)."""
        return f"{self.url}/v1"

    @property
    def anthropic_url(self) -> str:
        """The base URL for the Anthropic SDK (it appends `/v1/...` itself)."""
        return self.url

    # scripting -------------------------------------------------------------------------------

    def reply(self, *replies: str | Reply) -> None:
        """Queue answers for the next chat requests, in order (a str is `Reply(text)`)."""
        with self._lock:
            for r in replies:
                self._script.replies.append(r if isinstance(r, Reply) else Reply(r))

    def answer_with(self, answer: Callable[[ChatRequest], str | Reply] | None) -> None:
        """Answer every chat request the queue does not, by calling `answer(request)`."""
        with self._lock:
            self._script.answer = answer

    def fail_next(
        self,
        count: int,
        status: int,
        *,
        message: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        """The next `count` chat requests get HTTP `status` with `message` in the API's
        error shape (and a `Retry-After` header when given)."""
        text = message or f"injected failure {status}"
        with self._lock:
            for _ in range(count):
                self._script.failures.append(_Failure(status, text, retry_after))

    def drop_next(self, count: int) -> None:
        """The next `count` chat requests are read and then answered with a TCP reset."""
        with self._lock:
            self._script.drops += count

    def silence_after(self, chunks: int) -> None:
        """The next streamed answer sends `chunks` content chunks, then nothing: it holds the
        connection open until the client leaves or the server stops."""
        with self._lock:
            self._script.silence_after = chunks

    def error_after(self, chunks: int, error_type: str, message: str = "injected") -> None:
        """The next streamed answer sends `chunks` content chunks, then an in-stream error
        event of `error_type` (OpenAI: `data: {"error": ...}`; Anthropic: `event: error`) and
        ends."""
        with self._lock:
            self._script.error_after = (chunks, error_type, message)

    # the log ---------------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._log)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.is_chat]

    def count(self, path: str | None = None) -> int:
        """How many requests arrived (at `path` when given)."""
        return sum(1 for r in self.requests if path is None or r.path == path)

    # used by the handler ---------------------------------------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._log.append(request)

    def _take_injection(self) -> _Failure | Literal["drop"] | None:
        with self._lock:
            if self._script.drops:
                self._script.drops -= 1
                return "drop"
            if self._script.failures:
                return self._script.failures.popleft()
            return None

    def _take_silence(self) -> int | None:
        with self._lock:
            chunks, self._script.silence_after = self._script.silence_after, None
            return chunks

    def _take_stream_error(self) -> tuple[int, str, str] | None:
        with self._lock:
            found, self._script.error_after = self._script.error_after, None
            return found

    def _answer(self, request: ChatRequest) -> Reply | None:
        with self._lock:
            if self._script.replies:
                return self._script.replies.popleft()
            answer = self._script.answer
        if answer is None:
            return None
        found = answer(request)
        return found if isinstance(found, Reply) else Reply(found)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_model: ModelServer

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the request log is `ModelServer.requests`."""

    # plumbing --------------------------------------------------------------------------------

    def _api(self) -> Api:
        return "anthropic" if "anthropic-version" in self.headers else "openai"

    def _read(self) -> RecordedRequest:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = None
        headers = {k.lower(): v for k, v in self.headers.items()}
        path = urlsplit(self.path).path
        return RecordedRequest(self.command, path, headers, body, raw)

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, retry_after: float | None = None) -> None:
        kind = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error"}
        kind_name = kind.get(status, "rate_limit_error" if status == 429 else "api_error")
        if self._api() == "anthropic":
            payload: Any = {"type": "error", "error": {"type": kind_name, "message": message}}
        else:
            payload = {"error": {"message": message, "type": kind_name, "code": None}}
        headers = {"retry-after": f"{retry_after:g}"} if retry_after is not None else None
        self._json(status, payload, headers)

    def _reset(self) -> None:
        # SO_LINGER with a zero timeout makes close() send RST: a real "connection reset".
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _hold_silent(self) -> None:
        self.server_model._stopping.wait()
        self.close_connection = True

    # routing ---------------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._route()

    def do_POST(self) -> None:
        self._route()

    def _route(self) -> None:
        request = self._read()
        self.server_model._record(request)
        if not self.client_address[0].startswith("127."):
            self._error(403, "the model server only serves loopback clients")
            return
        if not self._authorised(request):
            self._error(401, "invalid API key")
            return
        if request.method == "GET" and request.path.startswith("/v1/models"):
            self._models(unquote(request.path[len("/v1/models") :].lstrip("/")))
        elif request.is_chat:
            self._chat(request)
        else:
            self._error(404, f"no route {request.method} {request.path}")

    def _authorised(self, request: RecordedRequest) -> bool:
        wanted = self.server_model.require_key
        if wanted is None:
            return True
        sent = request.headers.get("x-api-key") or request.headers.get("authorization", "")
        return sent in (wanted, f"Bearer {wanted}")

    # models ----------------------------------------------------------------------------------

    def _model_entry(self, model_id: str) -> dict[str, Any]:
        if self._api() == "anthropic":
            return {
                "type": "model",
                "id": model_id,
                "display_name": model_id,
                "created_at": "2025-01-01T00:00:00Z",
                "lifecycle": "active",
            }
        return {"id": model_id, "object": "model", "created": 0, "owned_by": "model-server"}

    def _models(self, model_id: str) -> None:
        models = self.server_model.models
        if model_id:
            if not self.server_model.retrieve_models:
                self._error(404, f"no route GET /v1/models/{model_id}")
                return
            if model_id not in models:
                self._error(404, f"The model `{model_id}` does not exist")
                return
            self._json(200, self._model_entry(model_id))
            return
        data = [self._model_entry(m) for m in models]
        if self._api() == "anthropic":
            first, last = (models[0], models[-1]) if models else (None, None)
            page = {"data": data, "has_more": False, "first_id": first, "last_id": last}
            self._json(200, page)
        else:
            self._json(200, {"object": "list", "data": data})

    # chat ------------------------------------------------------------------------------------

    def _chat(self, recorded: RecordedRequest) -> None:
        injected = self.server_model._take_injection()
        if injected == "drop":
            self._reset()
            return
        if isinstance(injected, _Failure):
            self._error(injected.status, injected.message, injected.retry_after)
            return
        body = recorded.body if isinstance(recorded.body, dict) else {}
        request = _chat_request(_CHAT_PATHS[recorded.path], body, recorded.headers)
        if request.model not in self.server_model.models:
            self._error(404, f"The model `{request.model}` does not exist")
            return
        reply = self.server_model._answer(request)
        if reply is None:
            self._error(400, "model server: no answer scripted (use reply() or answer_with())")
            return
        if request.api == "openai":
            _OpenAIAnswer(self, request, reply).send()
        else:
            _AnthropicAnswer(self, request, reply).send()


def _chat_request(api: Api, body: dict[str, Any], headers: dict[str, str]) -> ChatRequest:
    messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
    if api == "openai":
        system = "\n\n".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    else:
        system = _text(body.get("system"))
    return ChatRequest(
        api=api,
        model=str(body.get("model", "")),
        messages=messages,
        system=system,
        stream=bool(body.get("stream")),
        body=body,
        headers=headers,
    )


class _Answer(ABC):
    """Shared by both wire formats: pieces, counts, the reported model, silence."""

    def __init__(self, handler: _Handler, request: ChatRequest, reply: Reply) -> None:
        self.handler = handler
        self.request = request
        self.reply = reply
        server = handler.server_model
        self.model = reply.model or server.reported_model or request.model
        self.pieces = self._pieces(server.chunk_chars)
        words = sum(len(_text(m.get("content")).split()) for m in request.messages)
        self.input_tokens = (
            reply.input_tokens if reply.input_tokens is not None else words + len(request.system)
        )
        self.output_tokens = (
            reply.output_tokens if reply.output_tokens is not None else len(self.pieces)
        )

    def _pieces(self, size: int) -> list[tuple[str, float, dict[str, float]]]:
        if self.reply.tokens is not None:
            return list(self.reply.tokens)
        text = self.reply.text
        cuts = [text[i : i + size] for i in range(0, len(text), size)] or [""]
        return [(c, -0.01, {c: -0.01, f"{c}?": -5.0, f"{c}!": -6.0}) for c in cuts]

    def stream(self, events: Iterator[tuple[bool, bytes]]) -> None:
        """Send `events` ((is a content chunk, SSE bytes)) as a chunked body, going silent
        before the content chunk the script names."""
        handler = self.handler
        silence = handler.server_model._take_silence()
        failure = handler.server_model._take_stream_error()
        handler._start_stream()
        sent = 0
        try:
            for is_content, event in events:
                if is_content and silence is not None and sent >= silence:
                    handler._hold_silent()
                    return
                if is_content and failure is not None and sent >= failure[0]:
                    handler._chunk(self.error_event(failure[1], failure[2]))
                    break
                handler._chunk(event)
                sent += is_content
            handler._end_stream()
        except (BrokenPipeError, ConnectionResetError):
            handler.close_connection = True

    @abstractmethod
    def error_event(self, error_type: str, message: str) -> bytes:
        """An in-stream error event in this API's shape."""


class _OpenAIAnswer(_Answer):
    def error_event(self, error_type: str, message: str) -> bytes:
        return _sse({"error": {"message": message, "type": error_type, "code": None}})

    def send(self) -> None:
        if self.request.stream:
            self.stream(self._events())
        else:
            self.handler._json(200, self._whole())

    def _wants_logprobs(self) -> bool:
        return (
            bool(self.request.body.get("logprobs")) and self.handler.server_model.logprobs_supported
        )

    def _logprob_entry(self, piece: tuple[str, float, dict[str, float]]) -> dict[str, Any]:
        token, logprob, top = piece
        wanted = int(self.request.body.get("top_logprobs") or 0)
        alternatives = sorted(top.items(), key=lambda kv: -kv[1])[:wanted]
        return {
            "token": token,
            "logprob": logprob,
            "bytes": list(token.encode()),
            "top_logprobs": [
                {"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in alternatives
            ],
        }

    def _chunk(self, delta: dict[str, Any], **extra: Any) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": None, "logprobs": None, **extra}
        return {
            "id": "chatcmpl-model-server",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": self.model,
            "choices": [choice],
        }

    def _usage(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.input_tokens,
            "completion_tokens": self.output_tokens,
            "total_tokens": self.input_tokens + self.output_tokens,
        }

    def _events(self) -> Iterator[tuple[bool, bytes]]:
        yield False, _sse(self._chunk({"role": "assistant", "content": ""}))
        for piece in self.pieces:
            logprobs = {"content": [self._logprob_entry(piece)]} if self._wants_logprobs() else None
            yield True, _sse(self._chunk({"content": piece[0]}, logprobs=logprobs))
        if self.reply.finish is not None:
            yield False, _sse(self._chunk({}, finish_reason=self.reply.finish))
        options = self.request.body.get("stream_options") or {}
        if options.get("include_usage"):
            usage = self._chunk({})
            usage["choices"] = []
            usage["usage"] = self._usage()
            yield False, _sse(usage)
        yield False, _sse("[DONE]")

    def _whole(self) -> dict[str, Any]:
        logprobs = None
        if self._wants_logprobs():
            logprobs = {"content": [self._logprob_entry(p) for p in self.pieces]}
        message = {"role": "assistant", "content": "".join(p[0] for p in self.pieces)}
        return {
            "id": "chatcmpl-model-server",
            "object": "chat.completion",
            "created": 0,
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": self.reply.finish,
                    "logprobs": logprobs,
                }
            ],
            "usage": self._usage(),
        }


class _AnthropicAnswer(_Answer):
    def error_event(self, error_type: str, message: str) -> bytes:
        return _sse({"type": "error", "error": {"type": error_type, "message": message}}, "error")

    def send(self) -> None:
        if self.request.stream:
            self.stream(self._events())
        else:
            self.handler._json(200, self._whole())

    def _message(self, content: list[dict[str, Any]], output_tokens: int) -> dict[str, Any]:
        return {
            "id": "msg_model_server",
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": self.input_tokens, "output_tokens": output_tokens},
        }

    def _events(self) -> Iterator[tuple[bool, bytes]]:
        start = {"type": "message_start", "message": self._message([], 1)}
        yield False, _sse(start, "message_start")
        text_block = {"type": "text", "text": ""}
        block = {"type": "content_block_start", "index": 0, "content_block": text_block}
        yield False, _sse(block, "content_block_start")
        yield False, _sse({"type": "ping"}, "ping")
        for piece in self.pieces:
            text_delta = {"type": "text_delta", "text": piece[0]}
            delta = {"type": "content_block_delta", "index": 0, "delta": text_delta}
            yield True, _sse(delta, "content_block_delta")
        yield False, _sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
        if self.reply.finish is None:
            return
        stop = "end_turn" if self.reply.finish == "stop" else self.reply.finish
        message_delta = {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": self.output_tokens},
        }
        yield False, _sse(message_delta, "message_delta")
        yield False, _sse({"type": "message_stop"}, "message_stop")

    def _whole(self) -> dict[str, Any]:
        text = "".join(p[0] for p in self.pieces)
        message = self._message([{"type": "text", "text": text}], self.output_tokens)
        message["stop_reason"] = "end_turn"
        return message

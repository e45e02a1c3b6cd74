"""A scripted OpenAI-compatible model server on 127.0.0.1.

It answers `POST /v1/chat/completions` (plain and `stream: true`) and `POST /v1/responses`
(plain) by following scenario.TURNS: the n-th model call of a run (counted by the tool
results already in its input) calls the tools of turn n that the request offers, and the
call after the last turn answers in text. Every tool result it receives is recorded with its
call id, exactly as it arrived: that is what the model saw, the ground truth's other half.
"""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import scenario


def _text_of(content) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return json.dumps(content)


class ModelServer:
    def __init__(self):
        self.received = []  # {"call_id", "content", "api"} in arrival order, first sight only
        self.seen = set()
        self.requests = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_GET(self):
                if self.path.rstrip("/").endswith("/models"):
                    return self._json({"object": "list", "data": [{"id": "scripted-model", "object": "model"}]})
                self._json({"error": {"message": "not found"}}, 404)

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                if self.path.endswith("/chat/completions"):
                    return server._chat(self, body)
                if self.path.endswith("/responses"):
                    return server._responses(self, body)
                self._json({"error": {"message": f"no route {self.path}"}}, 404)

            def _json(self, obj, code=200):
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.port}/v1"

    def close(self):
        self.httpd.shutdown()

    def _record(self, call_id, content, api):
        with self.lock:
            if call_id not in self.seen:
                self.seen.add(call_id)
                self.received.append({"call_id": call_id, "content": content, "api": api})

    def _plan(self, offered, turn):
        """The tool calls of this turn, or None for the final answer."""
        with self.lock:
            self.requests += 1
            n = self.requests
        if turn >= len(scenario.TURNS):
            return None
        names = [t for t in scenario.TURNS[turn] if t in offered]
        return [(f"call_{n}_{i}_{t}", t) for i, t in enumerate(names)] or None

    def _chat(self, h, body):
        results = 0
        for m in body.get("messages", []):
            if m.get("role") == "tool":
                results += 1
                self._record(m.get("tool_call_id"), _text_of(m.get("content")), "chat")
        offered = [t.get("function", {}).get("name") for t in body.get("tools") or []]
        turn = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant" and m.get("tool_calls"))
        plan = self._plan(offered, turn)
        model = body.get("model", "scripted-model")
        created = int(time.time())
        if plan:
            msg = {"role": "assistant", "content": None, "tool_calls": [
                {"id": cid, "type": "function", "function": {"name": name, "arguments": "{}"}} for cid, name in plan]}
            finish = "tool_calls"
        else:
            msg = {"role": "assistant", "content": scenario.FINAL_ANSWER}
            finish = "stop"
        usage = {"prompt_tokens": 100 + 10 * results, "completion_tokens": 20, "total_tokens": 120 + 10 * results}
        rid = f"chatcmpl-{self.requests}"
        if not body.get("stream"):
            return h._json({"id": rid, "object": "chat.completion", "created": created, "model": model,
                            "choices": [{"index": 0, "message": msg, "finish_reason": finish, "logprobs": None}],
                            "usage": usage})
        chunks = [{"index": 0, "delta": {"role": "assistant", "content": msg.get("content") or ""}, "finish_reason": None}]
        for i, tc in enumerate(msg.get("tool_calls") or []):
            chunks.append({"index": 0, "delta": {"tool_calls": [dict(tc, index=i)]}, "finish_reason": None})
        chunks.append({"index": 0, "delta": {}, "finish_reason": finish})
        h.send_response(200)
        h.send_header("content-type", "text/event-stream")
        h.send_header("connection", "close")
        h.end_headers()
        for c in chunks:
            ev = {"id": rid, "object": "chat.completion.chunk", "created": created, "model": model, "choices": [c]}
            h.wfile.write(b"data: " + json.dumps(ev).encode() + b"\n\n")
        if (body.get("stream_options") or {}).get("include_usage"):
            ev = {"id": rid, "object": "chat.completion.chunk", "created": created, "model": model, "choices": [], "usage": usage}
            h.wfile.write(b"data: " + json.dumps(ev).encode() + b"\n\n")
        h.wfile.write(b"data: [DONE]\n\n")
        h.wfile.flush()
        h.close_connection = True

    def _responses(self, h, body):
        items = body.get("input")
        items = items if isinstance(items, list) else []
        for it in items:
            if it.get("type") == "function_call_output":
                self._record(it.get("call_id"), _text_of(it.get("output")), "responses")
        offered = [t.get("name") for t in body.get("tools") or []]
        turn = len({it.get("call_id") for it in items if it.get("type") == "function_call"})
        # A turn is a batch of calls: count batches by the plan's sizes.
        done, t = 0, 0
        while t < len(scenario.TURNS) and done + len([x for x in scenario.TURNS[t] if x in offered]) <= turn and turn:
            done += len([x for x in scenario.TURNS[t] if x in offered])
            t += 1
        plan = self._plan(offered, t)
        if plan:
            output = [{"type": "function_call", "id": f"fc_{cid}", "call_id": cid, "name": name,
                       "arguments": "{}", "status": "completed"} for cid, name in plan]
        else:
            output = [{"type": "message", "id": f"msg_{self.requests}", "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": scenario.FINAL_ANSWER, "annotations": []}]}]
        h._json({"id": f"resp_{self.requests}", "object": "response", "created_at": int(time.time()),
                 "status": "completed", "model": body.get("model", "scripted-model"), "output": output,
                 "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "error": None,
                 "incomplete_details": None, "instructions": None, "metadata": {}, "temperature": None,
                 "top_p": None, "text": {"format": {"type": "text"}}, "truncation": "disabled",
                 "usage": {"input_tokens": 100, "output_tokens": 20, "total_tokens": 120,
                           "input_tokens_details": {"cached_tokens": 0},
                           "output_tokens_details": {"reasoning_tokens": 0}}})

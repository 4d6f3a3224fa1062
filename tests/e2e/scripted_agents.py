"""(The team's scripted model server from shared/agents/tools, kept here for the agents' e2e tests.)
A scripted model server for Claude Code (Anthropic Messages API) and Codex CLI
(OpenAI Responses API, plus Chat Completions), so both can run offline.

usage: python3 scripted.py PORT SCRIPT.json
SCRIPT.json: [{"match": "substring of the first user prompt", "steps": [STEP, ...]}]
STEP: {"text": "..."} or {"tool": {"name": "...", "input": {...}}, "text": "optional preface"}
  Codex MCP and multi-agent tools need "namespace" in "tool" (e.g. "mcp__memoryd", name "recall");
  "$LAST_OUTPUT_ID" in a tool input is replaced by the first id found in the last tool output
  (used for spawn_agent -> wait_agent).
The step used is the count of tool results after the latest user prompt that matches a script entry
(0 = first reply). Requests without tools (side calls) get the entry's "side" text.
Claude Code: ANTHROPIC_BASE_URL=http://127.0.0.1:PORT. Codex: a model provider with
base_url = "http://127.0.0.1:PORT/v1" and wire_api = "responses".
With SCRIPTED_LOG=FILE each request is appended as one JSON line: {"path", "headers", "body"}.
"""
import itertools
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

counter = itertools.count()
SCRIPT = []


def flat(content):
    if isinstance(content, str):
        return content
    out = []
    for p in content or []:
        if isinstance(p, dict):
            out.append(p.get("text") or "")
    return " ".join(out)


def pick(user_texts):
    for s in SCRIPT:
        for u in user_texts:
            if s["match"] in u:
                return s
    return None


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def logreq(self, body):
        if os.environ.get("SCRIPTED_LOG"):
            with open(os.environ["SCRIPTED_LOG"], "a") as f:
                f.write(json.dumps({"method": self.command, "path": self.path,
                                    "headers": dict(self.headers), "body": body}) + "\n")

    def reply_json(self, code, obj):
        b = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def do_GET(self):
        self.logreq(None)
        if self.path.rstrip("/").endswith("/models"):
            return self.reply_json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model",
                                          "type": "model", "display_name": "Fake"}]})
        self.reply_json(404, {"error": {"type": "not_found", "message": "scripted server: " + self.path}})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        n = int(self.headers.get("content-length", 0) or 0)
        raw = self.rfile.read(n) if n else b"{}"
        if self.headers.get("content-encoding") == "zstd":
            raise SystemExit("zstd body")
        try:
            req = json.loads(raw or b"{}")
        except Exception:
            req = {"_raw": raw.decode("latin-1")}
        self.logreq(req)
        p = self.path.split("?")[0]
        if p.endswith("/messages/count_tokens"):
            return self.reply_json(200, {"input_tokens": 100})
        if p.endswith("/messages"):
            return self.anthropic(req)
        if p.endswith("/responses"):
            return self.openai_responses(req)
        if p.endswith("/chat/completions"):
            return self.chat(req)
        self.reply_json(404, {"error": {"type": "not_found", "message": "scripted server: " + p}})

    # ---------- shared ----------
    def sse_start(self):
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True

    def ev(self, name, obj):
        if name:
            self.wfile.write(f"event: {name}\n".encode())
        self.wfile.write(b"data: " + json.dumps(obj).encode() + b"\n\n")
        self.wfile.flush()

    def step_for(self, users, k, has_tools):
        s = pick(users)
        if not has_tools or s is None:
            return None, {"text": (s or {}).get("side", "Scripted reply.")}
        steps = s["steps"]
        return s, (steps[k] if k < len(steps) else {"text": "Done."})

    # ---------- Anthropic Messages ----------
    def anthropic(self, req):
        msgs = req.get("messages", [])
        users, k = [], 0
        for m in msgs:
            if m.get("role") == "user":
                c = m.get("content")
                if pick([flat(c)]):
                    users, k = [], 0  # the latest matching prompt starts a new count
                if isinstance(c, list):
                    k += sum(1 for b in c if isinstance(b, dict) and b.get("type") == "tool_result")
                users.append(flat(c))
        _, step = self.step_for(users, k, bool(req.get("tools")))
        mid = f"msg_scripted_{next(counter)}"
        blocks = []
        if step.get("text"):
            blocks.append({"type": "text", "text": step["text"]})
        if step.get("tool"):
            blocks.append({"type": "tool_use", "id": f"toolu_{mid}", "name": step["tool"]["name"],
                           "input": step["tool"]["input"]})
        stop = "tool_use" if step.get("tool") else "end_turn"
        usage = {"input_tokens": 100 + 10 * k, "output_tokens": 20, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        model = req.get("model", "fake-model")
        if not req.get("stream"):
            return self.reply_json(200, {"id": mid, "type": "message", "role": "assistant", "model": model,
                                         "content": blocks, "stop_reason": stop, "stop_sequence": None,
                                         "usage": usage})
        self.sse_start()
        self.ev("message_start", {"type": "message_start", "message": {
            "id": mid, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {**usage, "output_tokens": 1}}})
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                self.ev("content_block_start", {"type": "content_block_start", "index": i,
                                                "content_block": {"type": "text", "text": ""}})
                self.ev("content_block_delta", {"type": "content_block_delta", "index": i,
                                                "delta": {"type": "text_delta", "text": b["text"]}})
            else:
                self.ev("content_block_start", {"type": "content_block_start", "index": i,
                                                "content_block": {"type": "tool_use", "id": b["id"],
                                                                  "name": b["name"], "input": {}}})
                self.ev("content_block_delta", {"type": "content_block_delta", "index": i,
                                                "delta": {"type": "input_json_delta",
                                                          "partial_json": json.dumps(b["input"])}})
            self.ev("content_block_stop", {"type": "content_block_stop", "index": i})
        self.ev("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                  "usage": {"output_tokens": 20}})
        self.ev("message_stop", {"type": "message_stop"})

    # ---------- OpenAI Responses ----------
    def openai_responses(self, req):
        inp = req.get("input", [])
        if isinstance(inp, str):
            inp = [{"type": "message", "role": "user", "content": inp}]
        users, k = [], 0
        for it in inp:
            t = it.get("type", "message")
            if t == "message" and it.get("role") == "user":
                if pick([flat(it.get("content"))]):
                    users, k = [], 0
                users.append(flat(it.get("content")))
            if t in ("function_call_output", "custom_tool_call_output"):
                k += 1
        _, step = self.step_for(users, k, bool(req.get("tools")))
        outs = [it for it in inp if it.get("type") == "function_call_output"]
        if outs and step.get("tool") and "$LAST_OUTPUT_ID" in json.dumps(step["tool"]["input"]):
            import re
            o = json.dumps(outs[-1].get("output"))
            m = re.search(r'(?:agent_id|id)\\?"?\s*[:=]\s*\\?"([0-9a-zA-Z_-]{8,})', o)
            step = json.loads(json.dumps(step).replace("$LAST_OUTPUT_ID", m.group(1) if m else "unknown"))
        rid = f"resp_scripted_{next(counter)}"
        self.sse_start()
        resp = {"id": rid, "object": "response", "created_at": int(time.time()), "status": "in_progress",
                "model": req.get("model", "fake-model"), "output": []}
        self.ev("response.created", {"type": "response.created", "response": resp})
        out = []
        idx = 0
        if step.get("text"):
            item_id = f"msg_{rid}"
            self.ev("response.output_item.added", {"type": "response.output_item.added", "output_index": idx,
                    "item": {"type": "message", "id": item_id, "role": "assistant", "status": "in_progress",
                             "content": []}})
            self.ev("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item_id,
                    "output_index": idx, "content_index": 0, "delta": step["text"]})
            item = {"type": "message", "id": item_id, "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": step["text"], "annotations": []}]}
            self.ev("response.output_item.done", {"type": "response.output_item.done", "output_index": idx,
                                                  "item": item})
            out.append(item)
            idx += 1
        if step.get("tool"):
            item = {"type": "function_call", "id": f"fc_{rid}", "call_id": f"call_{rid}", "status": "completed",
                    "name": step["tool"]["name"], "arguments": json.dumps(step["tool"]["input"])}
            if step["tool"].get("namespace"):
                item["namespace"] = step["tool"]["namespace"]
            self.ev("response.output_item.added", {"type": "response.output_item.added", "output_index": idx,
                                                   "item": {**item, "arguments": ""}})
            self.ev("response.output_item.done", {"type": "response.output_item.done", "output_index": idx,
                                                  "item": item})
            out.append(item)
        usage = {"input_tokens": 100 + 10 * k, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": 120 + 10 * k}
        self.ev("response.completed", {"type": "response.completed",
                                       "response": {**resp, "status": "completed", "output": out, "usage": usage}})

    # ---------- OpenAI Chat Completions ----------
    def chat(self, req):
        msgs = req.get("messages", [])
        users = [flat(m.get("content")) for m in msgs if m.get("role") == "user"]
        k = sum(1 for m in msgs if m.get("role") == "tool")
        _, step = self.step_for(users, k, bool(req.get("tools")))
        cid = f"chatcmpl-{next(counter)}"
        base = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()),
                "model": req.get("model", "fake")}
        self.sse_start()
        if step.get("text"):
            self.ev(None, {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": step["text"]},
                                                "finish_reason": None}]})
        if step.get("tool"):
            call = {"index": 0, "id": f"call_{cid}", "type": "function",
                    "function": {"name": step["tool"]["name"], "arguments": json.dumps(step["tool"]["input"])}}
            self.ev(None, {**base, "choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]})
        self.ev(None, {**base, "choices": [{"index": 0, "delta": {},
                                            "finish_reason": "tool_calls" if step.get("tool") else "stop"}],
                       "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


if __name__ == "__main__":
    SCRIPT.extend(json.load(open(sys.argv[2])))
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()

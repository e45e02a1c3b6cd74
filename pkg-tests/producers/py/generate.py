"""Runs each producer against the scripted model server and writes its trace and truth file.

    python generate.py OUT_DIR [PRODUCER ...]

For each producer: start the model server and the OTLP receiver on 127.0.0.1, run the
producer in its own process (instrumentations patch libraries globally, so two never share
a process), then write OUT_DIR/NAME.<ext> (the trace) and OUT_DIR/NAME.truth.json.

The truth comes from outside the trace: what each tool returned (scenario.py) and what the
model server received for each call id. A row's expected status:
- the model got the result unchanged: `ok`;
- it got fewer bytes, with a cut or redaction marker: `clipped`;
- fewer bytes and no marker: `silent_clip`;
- the same data in another serialisation (a dict the trace records as JSON, sent to the
  model as Python's repr): `reformatted`;
- the trace cannot hold what the model got (content capture off, the Responses API
  without input capture): `incomplete`, per the producer's declaration below.
"""

import ast
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import scenario  # noqa: E402
from collector import Collector  # noqa: E402
from model_server import ModelServer  # noqa: E402

VENV_PY = os.path.join(os.path.dirname(HERE), ".venv", "bin", "python")
AI_SDK = os.path.join(os.path.dirname(HERE), "ai-sdk")


def py(script):
    return [VENV_PY, os.path.join(HERE, "run", script)]


# name: how to run it, where its trace comes from, the join a reader can achieve (the call id
# is in the trace, or not), and what the trace can show.
PRODUCERS = {
    "pydantic-ai": dict(cmd=py("pydantic_ai_genai.py"), trace="otlp", join="tool_call_id"),
    "langchain-openinference": dict(cmd=py("langchain_agent.py") + ["openinference"], trace="otlp",
                                    join="tool_call_id"),
    "langchain-openllmetry": dict(cmd=py("langchain_agent.py") + ["openllmetry"], trace="otlp",
                                  join="tool_call_id", env={"TRACELOOP_TRACE_CONTENT": "true"}),
    "openai-agents": dict(cmd=py("openai_agents.py") + ["own", "chat"], trace="file", format="openai_agents",
                          join="order"),
    "openai-agents-responses": dict(cmd=py("openai_agents.py") + ["own", "responses"], trace="file",
                                    format="openai_agents", join="order", incomplete=True,
                                    notes="Responses API: the SDK's response spans export only the response id"),
    "openai-agents-no-sensitive": dict(cmd=py("openai_agents.py") + ["own", "chat", "no-sensitive"], trace="file",
                                       format="openai_agents", join="order", incomplete=True,
                                       notes="trace_include_sensitive_data=False: no input or output exported"),
    # OpenInference's TOOL spans for the Agents SDK carry no call id.
    "openai-agents-openinference": dict(cmd=py("openai_agents.py") + ["openinference", "chat"], trace="otlp",
                                        join="order"),
}


def _strings(value, out):
    """Every string in a JSON value, and in the JSON documents those strings hold."""
    if isinstance(value, str):
        out.add(value)
        if value[:1] in "{[":
            try:
                _strings(json.loads(value), out)
            except ValueError:
                pass
    elif isinstance(value, list):
        for v in value:
            _strings(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _strings(v, out)


def trace_strings(path):
    out = set()
    with open(path) as f:
        text = f.read()
    try:
        _strings(json.loads(text), out)
    except ValueError:
        for line in text.splitlines():
            if line.strip():
                _strings(json.loads(line), out)
    return out


def serialisations(value):
    """The texts a framework may turn a dict result into."""
    return {json.dumps(value), json.dumps(value, ensure_ascii=False), json.dumps(value, separators=(",", ":")),
            json.dumps(value, indent=2), json.dumps(value, sort_keys=True), repr(value), str(value)}


def expected_status(tool, received, incomplete, recorded):
    """`recorded`: every string the trace holds, for a dict result's serialisation."""
    if incomplete:
        return "incomplete"
    original = scenario.TOOLS[tool]()
    if isinstance(original, dict):
        # The model got some serialisation of the dict (checked below); the trace recorded
        # the tool's result in one too. Equal text is `ok`; the same data in another text
        # (the tool span holds JSON, the model got Python's repr) is `reformatted`.
        forms = serialisations(original)
        if received not in forms:
            return "silent_clip"
        return "reformatted" if (forms & recorded) - {received} else "ok"
    if received == original:
        return "ok"
    if "[truncated " in received or "[REDACTED]" in received:
        return "clipped"
    return "silent_clip"


def run(name, spec, out_dir):
    server, collector = ModelServer(), Collector()
    out_ext = {"otlp": "otlp.jsonl", "file": spec.get("ext", "jsonl")}[spec["trace"]]
    trace_path = os.path.join(out_dir, f"{name}.{out_ext}")
    env = dict(os.environ, TOOLSLICE_MODEL_URL=server.base_url, TOOLSLICE_OTLP_URL=collector.endpoint,
               TOOLSLICE_OUT=trace_path, OPENAI_API_KEY="sk-scripted", OPENAI_BASE_URL=server.base_url,
               NO_PROXY="127.0.0.1", no_proxy="127.0.0.1", OTEL_SDK_DISABLED="false")
    env.update(spec.get("env", {}))
    t0 = time.time()
    p = subprocess.run(spec["cmd"], env=env, capture_output=True, text=True, timeout=300,
                       cwd=spec.get("cwd", HERE))
    if p.returncode != 0:
        raise SystemExit(f"{name}: producer failed ({p.returncode})\n{p.stdout[-3000:]}\n{p.stderr[-6000:]}")
    time.sleep(0.3)
    server.close()
    collector.close()
    if spec["trace"] == "otlp":
        if not collector.lines:
            raise SystemExit(f"{name}: the producer exported no spans\n{p.stderr[-3000:]}")
        with open(trace_path, "w") as f:
            f.write("".join(line + "\n" for line in collector.lines))
    elif not os.path.exists(trace_path):
        raise SystemExit(f"{name}: the producer wrote no {trace_path}\n{p.stderr[-3000:]}")
    rows = []
    recorded = trace_strings(trace_path)
    for r in server.received:
        tool = scenario.find_tool(r["content"])
        if tool is None:
            raise SystemExit(f"{name}: the model received a result no tool returned: {r['content'][:80]!r}")
        status = expected_status(tool, r["content"], spec.get("incomplete", False), recorded)
        rows.append({"tool": tool, "call_id": r["call_id"], "action": scenario.ACTIONS[tool],
                     "status": status, "join": spec["join"],
                     "injected_bytes": len(r["content"].encode())})
    if len(rows) != sum(len(t) for t in scenario.TURNS):
        raise SystemExit(f"{name}: expected {sum(len(t) for t in scenario.TURNS)} tool results, the model got {len(rows)}")
    exit_code = 1 if any(r["status"] in ("silent_clip", "incomplete") for r in rows) else 0
    truth = {"producer": name, "trace": os.path.basename(trace_path), "format": spec.get("format", "otlp"),
             "notes": spec.get("notes", ""), "exit_code": exit_code, "rows": rows}
    with open(os.path.join(out_dir, f"{name}.truth.json"), "w") as f:
        json.dump(truth, f, indent=1)
        f.write("\n")
    print(f"{name}: {len(rows)} tool calls, exit {exit_code}, {os.path.getsize(trace_path)} bytes, {time.time() - t0:.1f}s")


def main():
    out_dir = sys.argv[1]
    names = sys.argv[2:] or list(PRODUCERS)
    os.makedirs(out_dir, exist_ok=True)
    for n in names:
        run(n, PRODUCERS[n], out_dir)


if __name__ == "__main__":
    main()

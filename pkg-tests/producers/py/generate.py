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
import urllib.request

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
LANGCHAIN = ["langchain", "langchain-core", "langchain-openai", "langgraph"]
OTLP = ["opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
AGENTS = ["openai-agents", "openai"]
AI_SDK_LIBS = ["ai", "@ai-sdk/openai-compatible", "@opentelemetry/sdk-trace-node",
               "@opentelemetry/exporter-trace-otlp-proto"]

# name: how to run it, where its trace comes from, the join a correct reader achieves (by
# call id when the trace carries it anywhere, else by order), what the trace cannot show,
# and the libraries whose versions the corpus records.
PRODUCERS = {
    "pydantic-ai": dict(cmd=py("pydantic_ai_genai.py"), trace="otlp", join="tool_call_id",
                        libs=["pydantic-ai-slim", "openai"] + OTLP),
    "langchain-openinference": dict(cmd=py("langchain_agent.py") + ["openinference"], trace="otlp",
                                    join="tool_call_id",
                                    libs=LANGCHAIN + ["openinference-instrumentation-langchain"] + OTLP),
    "langchain-openllmetry": dict(cmd=py("langchain_agent.py") + ["openllmetry"], trace="otlp",
                                  join="tool_call_id", env={"TRACELOOP_TRACE_CONTENT": "true"},
                                  libs=LANGCHAIN + ["opentelemetry-instrumentation-langchain"] + OTLP),
    "openai-agents": dict(cmd=py("openai_agents.py") + ["own", "chat"], trace="file", format="openai_agents",
                          join="order", libs=AGENTS),
    "openai-agents-responses": dict(cmd=py("openai_agents.py") + ["own", "responses"], trace="file",
                                    format="openai_agents", join="order", incomplete=True, libs=AGENTS,
                                    notes="Responses API: the SDK's response spans export only the response id"),
    "openai-agents-no-sensitive": dict(cmd=py("openai_agents.py") + ["own", "chat", "no-sensitive"], trace="file",
                                       format="openai_agents", join="order", incomplete=True, libs=AGENTS,
                                       notes="trace_include_sensitive_data=False: no input or output exported"),
    # OpenInference's TOOL spans for the Agents SDK carry no call id.
    "openai-agents-openinference": dict(cmd=py("openai_agents.py") + ["openinference", "chat"], trace="otlp",
                                        join="order",
                                        libs=AGENTS + ["openinference-instrumentation-openai-agents"] + OTLP),
    "openai-v2-util-genai": dict(cmd=py("raw_openai.py") + ["openai-v2"], trace="otlp", join="tool_call_id",
                                 libs=["openai", "opentelemetry-instrumentation-openai-v2",
                                       "opentelemetry-util-genai"] + OTLP),
    "openinference-openai": dict(cmd=py("raw_openai.py") + ["openinference"], trace="otlp", join="tool_call_id",
                                 libs=["openai", "openinference-instrumentation-openai",
                                       "openinference-instrumentation"] + OTLP),
    "ai-sdk-generate": dict(cmd=["node", os.path.join(AI_SDK, "agent.mjs"), "generate"], trace="otlp",
                            join="tool_call_id", cwd=AI_SDK, libs=AI_SDK_LIBS),
    "ai-sdk-stream": dict(cmd=["node", os.path.join(AI_SDK, "agent.mjs"), "stream"], trace="otlp",
                          join="tool_call_id", cwd=AI_SDK, libs=AI_SDK_LIBS),
    # Every result passed on unchanged (a dict may still change serialisation): runs that pass.
    "langchain-openinference-clean": dict(cmd=py("langchain_agent.py") + ["openinference"], trace="otlp",
                                          join="tool_call_id", plan="clean",
                                          libs=LANGCHAIN + ["openinference-instrumentation-langchain"] + OTLP),
    "langchain-openllmetry-clean": dict(cmd=py("langchain_agent.py") + ["openllmetry"], trace="otlp",
                                        join="tool_call_id", env={"TRACELOOP_TRACE_CONTENT": "true"}, plan="clean",
                                        libs=LANGCHAIN + ["opentelemetry-instrumentation-langchain"] + OTLP),
    "openai-agents-openinference-clean": dict(cmd=py("openai_agents.py") + ["openinference", "chat"], trace="otlp",
                                              join="order", plan="clean",
                                              libs=AGENTS + ["openinference-instrumentation-openai-agents"] + OTLP),
    "openai-v2-util-genai-clean": dict(cmd=py("raw_openai.py") + ["openai-v2"], trace="otlp", join="tool_call_id",
                                       plan="clean", libs=["openai", "opentelemetry-instrumentation-openai-v2",
                                                           "opentelemetry-util-genai"] + OTLP),
    "ai-sdk-generate-clean": dict(cmd=["node", os.path.join(AI_SDK, "agent.mjs"), "generate"], trace="otlp",
                                  join="tool_call_id", cwd=AI_SDK, plan="clean", libs=AI_SDK_LIBS),
    # Model calls only: nothing to check, which must not pass as a green run.
    "openinference-openai-no-tools": dict(cmd=py("raw_openai.py") + ["openinference", "no-tools"], trace="otlp",
                                          join="tool_call_id", tools=False,
                                          libs=["openai", "openinference-instrumentation-openai"] + OTLP),
    "ai-sdk-no-tools": dict(cmd=["node", os.path.join(AI_SDK, "agent.mjs"), "generate", "no-tools"], trace="otlp",
                            join="tool_call_id", cwd=AI_SDK, tools=False, libs=AI_SDK_LIBS),
    "phoenix-langchain": dict(cmd=py("langchain_agent.py") + ["openinference"], trace="phoenix", phoenix=True,
                              format="phoenix", join="tool_call_id",
                              libs=["arize-phoenix"] + LANGCHAIN + ["openinference-instrumentation-langchain"] + OTLP),
}


def versions(libs):
    """The installed version of each library (Python, Phoenix's virtualenv, or npm)."""
    from importlib import metadata

    out = {}
    for lib in libs:
        if lib.startswith("@") or lib == "ai":
            with open(os.path.join(AI_SDK, "node_modules", lib, "package.json")) as f:
                out[lib] = json.load(f)["version"]
        elif lib == "arize-phoenix":
            out[lib] = subprocess.run([os.path.join(os.path.dirname(PHOENIX), "python"), "-c",
                                       "import importlib.metadata as m; print(m.version('arize-phoenix'))"],
                                      capture_output=True, text=True, check=True).stdout.strip()
        else:
            out[lib] = metadata.version(lib)
    return out


def write_versions(out_dir):
    """VERSIONS.md: every truth file's producer, its libraries, and its expected verdicts."""
    import glob
    import platform

    node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    lines = ["# Producer versions", "",
             f"Generated by `scripts/producers` (Python {platform.python_version()}, Node {node}).", "",
             "| trace | libraries | tool calls | expected statuses | exit |", "|---|---|---|---|---|"]
    for path in sorted(glob.glob(os.path.join(out_dir, "*.truth.json"))):
        with open(path) as f:
            t = json.load(f)
        libs = ", ".join(f"{k} {v}" for k, v in t["versions"].items())
        statuses = ", ".join(f"{r['tool']}={r['status']}" for r in t["rows"])
        lines.append(f"| `{t['trace']}` | {libs} | {len(t['rows'])} | {statuses} | {t['exit_code']} |")
    with open(os.path.join(out_dir, "VERSIONS.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


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


PHOENIX = os.path.join(os.path.dirname(HERE), ".venv-phoenix", "bin", "phoenix")


class Phoenix:
    """`phoenix serve` on 127.0.0.1 with its SQLite database in a temporary directory."""

    def __init__(self):
        import socket
        import tempfile

        ports = []
        for _ in range(2):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
            s.close()
        self.port = ports[0]
        self.dir = tempfile.mkdtemp(prefix="phoenix-")
        env = dict(os.environ, PHOENIX_WORKING_DIR=self.dir, PHOENIX_HOST="127.0.0.1", PHOENIX_PORT=str(ports[0]),
                   PHOENIX_GRPC_PORT=str(ports[1]), PHOENIX_TELEMETRY_ENABLED="false")
        self.log = open(os.path.join(self.dir, "phoenix.log"), "w")
        self.proc = subprocess.Popen([PHOENIX, "serve"], env=env, stdout=self.log, stderr=subprocess.STDOUT)
        for _ in range(120):
            try:
                if urllib.request.urlopen(f"{self.url}/healthz", timeout=2).read() == b"OK":
                    return
            except OSError:
                time.sleep(1)
        self.close()
        raise SystemExit(f"phoenix did not start; see {self.log.name}")

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def get(self, path):
        return json.loads(urllib.request.urlopen(f"{self.url}{path}", timeout=30).read())

    def spans(self, route):
        """Every span of the default project from a REST span route, as one response object."""
        data, cursor = [], None
        while True:
            page = self.get(f"/v1/projects/default/{route}?limit=1000" + (f"&cursor={cursor}" if cursor else ""))
            data.extend(page["data"])
            cursor = page.get("next_cursor")
            if not cursor:
                return {"data": data, "next_cursor": None}

    def close(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.log.close()


def run(name, spec, out_dir):
    phoenix = Phoenix() if spec.get("phoenix") else None
    server, collector = ModelServer(), Collector(forward=phoenix and f"{phoenix.url}/v1/traces")
    out_ext = {"otlp": "otlp.jsonl", "file": spec.get("ext", "jsonl"), "phoenix": "spans.json"}[spec["trace"]]
    trace_path = os.path.join(out_dir, f"{name}.{out_ext}")
    env = dict(os.environ, TOOLSLICE_MODEL_URL=server.base_url, TOOLSLICE_OTLP_URL=collector.endpoint,
               TOOLSLICE_OUT=trace_path, OPENAI_API_KEY="sk-scripted", OPENAI_BASE_URL=server.base_url,
               NO_PROXY="127.0.0.1", no_proxy="127.0.0.1", OTEL_SDK_DISABLED="false")
    env.update(spec.get("env", {}))
    env["TOOLSLICE_PLAN"] = scenario.PLAN = spec.get("plan", "cuts")
    scenario_path = os.path.join(out_dir, ".scenario.json")
    with open(scenario_path, "w") as f:
        json.dump({"tools": {n: {"description": scenario.DESCRIPTIONS[n], "result": fn(),
                                 "passed_on": scenario.cut(n, fn()) if isinstance(fn(), str) else None}
                             for n, fn in scenario.TOOLS.items()}}, f)
    env["TOOLSLICE_SCENARIO"] = scenario_path
    t0 = time.time()
    p = subprocess.run(spec["cmd"], env=env, capture_output=True, text=True, timeout=300,
                       cwd=spec.get("cwd", HERE))
    if p.returncode != 0:
        raise SystemExit(f"{name}: producer failed ({p.returncode})\n{p.stdout[-3000:]}\n{p.stderr[-6000:]}")
    time.sleep(0.3)
    server.close()
    collector.close()
    if phoenix:
        # What Phoenix gives its users back: its REST span list, and the same spans as OTLP.
        time.sleep(1.0)  # Phoenix inserts the spans it received in the background
        for _ in range(30):
            export = phoenix.spans("spans")
            sent = sum(len(ss.get("spans", [])) for line in collector.lines
                       for rs in json.loads(line).get("resourceSpans", []) for ss in rs.get("scopeSpans", []))
            if export["data"] and len(export["data"]) >= sent:
                break
            time.sleep(1)
        with open(trace_path, "w") as f:
            json.dump(export, f, ensure_ascii=False, indent=1)
            f.write("\n")
        with open(trace_path.replace(".spans.json", ".otlpv1.json"), "w") as f:
            json.dump(phoenix.spans("spans/otlpv1"), f, ensure_ascii=False, indent=1)
            f.write("\n")
        phoenix.close()
    elif spec["trace"] == "otlp":
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
        returned = scenario.TOOLS[tool]()
        rows.append({"tool": tool, "call_id": r["call_id"],
                     "action": scenario.ACTIONS[tool] if scenario.PLAN == "cuts" else "unchanged",
                     "status": status, "join": spec["join"],
                     # A text result is measured as it is; a dict as whatever text the trace holds.
                     "observed_bytes": len(returned.encode()) if isinstance(returned, str) else None,
                     "injected_bytes": len(r["content"].encode())})
    want = sum(len(t) for t in scenario.TURNS) if spec.get("tools", True) else 0
    if len(rows) != want:
        raise SystemExit(f"{name}: expected {want} tool results, the model got {len(rows)}")
    # No row: nothing was checked, which fails the run (unless the caller allows empty runs).
    exit_code = 1 if not rows or any(r["status"] in ("silent_clip", "incomplete") for r in rows) else 0
    traces = [(name, trace_path, spec.get("format", "otlp"))]
    if phoenix:
        traces.append((f"{name}-otlpv1", trace_path.replace(".spans.json", ".otlpv1.json"), "phoenix"))
    for truth_name, path, fmt in traces:
        truth = {"producer": truth_name, "trace": os.path.basename(path), "format": fmt,
                 "plan": scenario.PLAN,
                 "notes": spec.get("notes", ""), "versions": versions(spec["libs"]),
                 "exit_code": exit_code, "rows": rows}
        with open(os.path.join(out_dir, f"{truth_name}.truth.json"), "w") as f:
            json.dump(truth, f, indent=1)
            f.write("\n")
    print(f"{name}: {len(rows)} tool calls, exit {exit_code}, {os.path.getsize(trace_path)} bytes, {time.time() - t0:.1f}s")


def main():
    out_dir = sys.argv[1]
    names = sys.argv[2:] or list(PRODUCERS)
    os.makedirs(out_dir, exist_ok=True)
    for n in names:
        if n not in PRODUCERS:
            raise SystemExit(f"unknown producer {n}; known: {', '.join(PRODUCERS)}")
        run(n, PRODUCERS[n], out_dir)
    os.remove(os.path.join(out_dir, ".scenario.json"))
    write_versions(out_dir)


if __name__ == "__main__":
    main()

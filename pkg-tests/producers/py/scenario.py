"""The agent run every producer performs, and the ground truth each tool call plants.

Every producer offers the same five tools to the scripted model (model_server.py), which
calls them over two turns and then answers. Between a tool and the next model call the
application changes the result through its framework's own hook (a LangChain middleware, a
pydantic-ai history processor, the Agents SDK's call_model_input_filter, the AI SDK's
prepareStep, or the loop of an app that drives the client itself): that change is the
ground truth the trace reader has to recover.

| tool      | returns                      | the hook passes on                          | truth          |
|-----------|------------------------------|---------------------------------------------|----------------|
| build_log | a 3 KB failing build log     | its first 1024 bytes, nothing said          | silent_clip    |
| read_file | a 1.5 KB YAML config         | 500 chars + `...[truncated N chars]`        | clipped        |
| get_env   | env text with a token        | the token replaced by `[REDACTED]`          | clipped        |
| ls        | a short listing              | unchanged                                   | ok             |
| get_job   | a dict                       | unchanged (the framework serialises it)     | ok, or a format-only change when the model got another serialisation than the trace recorded |
"""

import json
import os

# `cuts` (the table above) or `clean` (every result passed on unchanged: a run that must pass).
PLAN = os.environ.get("TOOLSLICE_PLAN", "cuts")

# The model's script: which tools it calls in which turn (tools missing from a request are
# skipped), then a final answer.
TURNS = [["build_log", "read_file"], ["get_env", "ls", "get_job"]]
FINAL_ANSWER = "The build fails on a missing config key; billing listens on 8443."

TOKEN = "ghp_" + "Zq8" * 12


def build_log() -> str:
    lines = ["$ npm run build", "> billing@2.4.1 build", "> tsc -p tsconfig.json && node scripts/bundle.mjs"]
    n = 0
    while sum(len(l) + 1 for l in lines) < 3_000:
        n += 1
        lines.append(f"[{n:04d}] compiling src/module_{n:03d}.ts ({n * 37 % 900 + 100} lines) ok")
    lines.append("src/config.ts:42:13 - error TS2339: Property 'port' does not exist on type 'BillingConfig'.")
    lines.append("Found 1 error. Exit code 2")
    return "\n".join(lines) + "\n"


def read_file() -> str:
    out = ["# config/app.yaml", "app:", "  name: billing"]
    i = 0
    while sum(len(l) + 1 for l in out) < 1500:
        i += 1
        out.append(f"  feature_{i:02d}: {{enabled: {str(i % 2 == 0).lower()}, rollout: {i * 7 % 100}}}")
    out.append("production:")
    out.append("  port: 8443")
    return "\n".join(out) + "\n"


def get_env() -> str:
    return f"NODE_ENV=production\nREGION=eu-west-1\nGITHUB_TOKEN={TOKEN}\nLOG_LEVEL=info\n"


def ls() -> str:
    return "README.md\nconfig/\nsrc/\npackage.json\n"


def get_job() -> dict:
    return {"job_id": "j-7731", "status": "failed", "exit_code": 2, "retried": False,
            "owner": None, "steps": ["checkout", "install", "build"]}


TOOLS = {"build_log": build_log, "read_file": read_file, "get_env": get_env, "ls": ls, "get_job": get_job}
DESCRIPTIONS = {
    "build_log": "Return the log of the last CI build.",
    "read_file": "Return the application's config file.",
    "get_env": "Return the deployment's environment variables.",
    "ls": "List the repository's top-level files.",
    "get_job": "Return the last CI job as a record.",
}

# What the hook does to each tool's result before the model sees it.
ACTIONS = {"build_log": "silent_prefix_cut", "read_file": "marker_cut", "get_env": "redaction",
           "ls": "unchanged", "get_job": "unchanged"}


def cut(tool: str, text: str) -> str:
    """The application's change to a tool result, as its framework hook applies it."""
    action = ACTIONS[tool] if PLAN == "cuts" else "unchanged"
    if action == "silent_prefix_cut":
        return text.encode()[:1024].decode("utf-8", "ignore")
    if action == "marker_cut":
        if "...[truncated " in text:  # hooks run on every model call; cut once
            return text
        return text[:500] + f"...[truncated {len(text) - 500} chars]"
    if action == "redaction":
        return text.replace(TOKEN, "[REDACTED]")
    return text


def find_tool(text: str):
    """Which tool produced `text` (a result as some framework passed it on)."""
    if text.startswith("$ npm run build"):
        return "build_log"
    if text.startswith("# config/app.yaml"):
        return "read_file"
    if text.startswith("NODE_ENV="):
        return "get_env"
    if text.startswith("README.md"):
        return "ls"
    if "j-7731" in text:
        return "get_job"
    return None


def as_json(value) -> str:
    return json.dumps(value, ensure_ascii=False)

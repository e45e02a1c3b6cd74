"""An app that drives the OpenAI client itself, traced by an OpenAI instrumentation.

    raw_openai.py openai-v2|openinference

`openai-v2`: opentelemetry-instrumentation-openai-v2 (model calls, GenAI conventions, content
captured on the span) and opentelemetry-util-genai's TelemetryHandler for the tool spans;
the app sends a dict result to the model as `str(result)`, the Python repr, the way many
hand-written loops do. `openinference`: openinference-instrumentation-openai for the model
calls and an OITracer TOOL span (with `tool.id`) per tool; the app sends `json.dumps(result)`.

The hook: the app's own loop, between running a tool and appending its message.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402
import scenario  # noqa: E402

which = sys.argv[1]
with_tools = sys.argv[2:] != ["no-tools"]  # no-tools: a run of model calls only
if which == "openai-v2":
    os.environ.setdefault("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    os.environ.setdefault("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
provider = common.tracer_provider(f"raw-openai-{which}")

from openai import OpenAI  # noqa: E402

if which == "openai-v2":
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
    from opentelemetry.util.genai.handler import get_telemetry_handler

    OpenAIInstrumentor().instrument(tracer_provider=provider)
    handler = get_telemetry_handler(tracer_provider=provider)

    def run_tool(name, call_id):
        with handler.tool(name, tool_call_id=call_id, tool_type="function") as inv:
            inv.arguments = {}
            result = scenario.TOOLS[name]()
            inv.tool_result = result
        return result if isinstance(result, str) else str(result)
else:
    from openinference.instrumentation import OITracer, TraceConfig
    from openinference.instrumentation.openai import OpenAIInstrumentor
    from opentelemetry import trace

    OpenAIInstrumentor().instrument(tracer_provider=provider)
    tracer = OITracer(trace.get_tracer("ops-app", tracer_provider=provider), config=TraceConfig())

    def run_tool(name, call_id):
        with tracer.start_as_current_span(name, openinference_span_kind="tool") as span:
            span.set_tool(name=name, description=scenario.DESCRIPTIONS[name], parameters={"type": "object"})
            span.set_attribute("tool.id", call_id)
            span.set_input("{}", mime_type="application/json")
            result = scenario.TOOLS[name]()
            span.set_output(result)
        return result if isinstance(result, str) else json.dumps(result)

client = OpenAI(base_url=common.MODEL_URL, api_key=common.API_KEY)
tools = [{"type": "function", "function": {"name": n, "description": scenario.DESCRIPTIONS[n],
                                           "parameters": {"type": "object", "properties": {}}}}
         for n in scenario.TOOLS] if with_tools else None
if which == "openai-v2":
    from opentelemetry import trace

    agent_span = trace.get_tracer("ops-app", tracer_provider=provider).start_as_current_span(
        "invoke_agent ops_agent", attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "ops_agent"})
else:
    agent_span = tracer.start_as_current_span("ops_agent", openinference_span_kind="agent")
messages = [{"role": "system", "content": "You are the ops agent."},
            {"role": "user", "content": "Why does the billing build fail, and which port does it use?"}]
with agent_span:
    while True:
        reply = client.chat.completions.create(model="scripted-model", messages=messages, **({"tools": tools} if tools else {})).choices[0].message
        if not reply.tool_calls:
            print(reply.content)
            break
        messages.append(reply.model_dump(exclude_none=True))
        for tc in reply.tool_calls:
            text = run_tool(tc.function.name, tc.id)
            messages.append({"role": "tool", "tool_call_id": tc.id, "content": scenario.cut(tc.function.name, text)})
provider.force_flush()
provider.shutdown()

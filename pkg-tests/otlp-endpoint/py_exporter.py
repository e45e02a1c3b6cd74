"""A GenAI agent run traced with the real OpenTelemetry Python SDK and exported with its
OTLP/HTTP exporter (protobuf, the exporter's default), as a test's exporter.

usage: py_exporter.py ENDPOINT_URL [--gzip] [--scenario run|pair]

`run`: a tool span whose result the next model call received cut (a silent clip), one it
received whole, each exported in a batch before the model call's; then a tool span with no
later model call. `pair`: one tool span and the model call that received it, in two batches.
Prints one JSON line: the trace id and the span ids by name.
"""
import json
import sys

from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

url = sys.argv[1]
gzip = "--gzip" in sys.argv
scenario = sys.argv[sys.argv.index("--scenario") + 1] if "--scenario" in sys.argv else "run"

exporter = OTLPSpanExporter(
    endpoint=url, compression=Compression.Gzip if gzip else Compression.NoCompression, timeout=30
)
provider = TracerProvider(resource=Resource.create({"service.name": "py-agent"}))
provider.add_span_processor(BatchSpanProcessor(exporter))
tracer = provider.get_tracer("toolslice-test")
ids = {}


def tool(name, call_id, result):
    with tracer.start_as_current_span(f"execute_tool {name}") as span:
        span.set_attribute("gen_ai.operation.name", "execute_tool")
        span.set_attribute("gen_ai.tool.name", name)
        span.set_attribute("gen_ai.tool.call.id", call_id)
        span.set_attribute("gen_ai.tool.call.result", result)
        ids[name] = format(span.get_span_context().span_id, "016x")


def chat(responses):
    messages = [{"role": "user", "parts": [{"type": "text", "content": "weather and time?"}]}]
    messages.append({"role": "assistant", "parts": [
        {"type": "tool_call", "id": c, "name": "f", "arguments": {}} for c, _ in responses]})
    messages.append({"role": "tool", "parts": [
        {"type": "tool_call_response", "id": c, "response": r} for c, r in responses]})
    with tracer.start_as_current_span("chat gpt-4o") as span:
        span.set_attribute("gen_ai.operation.name", "chat")
        span.set_attribute("gen_ai.input.messages", json.dumps(messages))
        ids["chat"] = format(span.get_span_context().span_id, "016x")


weather = "Sunny, 21 C, wind 5 km/h from the north-west; UV index 6; pollen high. " * 4
with tracer.start_as_current_span("invoke_agent weather") as root:
    root.set_attribute("gen_ai.operation.name", "invoke_agent")
    trace_id = format(root.get_span_context().trace_id, "032x")
    if scenario == "pair":
        tool("get_time", "call_t", "12:00")
        provider.force_flush()
        chat([("call_t", "12:00")])
    else:
        tool("get_weather", "call_w", weather)
        tool("get_time", "call_t", "12:00")
        provider.force_flush()  # the tool results go in one export request ...
        chat([("call_w", weather[:60]), ("call_t", "12:00")])
        provider.force_flush()  # ... the model call that received them in the next
        tool("get_news", "call_n", "no news")
provider.force_flush()
provider.shutdown()
print(json.dumps({"trace_id": trace_id, "spans": ids}))

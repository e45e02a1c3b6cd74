"""An OpenAI Agents SDK agent, traced by its own tracing or by OpenInference's instrumentor.

    openai_agents.py own|openinference [chat|responses] [sensitive|no-sensitive]

`own`: a TracingProcessor (the SDK's processor interface) that writes each finished trace
and span as `Trace.export()` / `Span.export()` JSON, one per line, the layout its backend
ingests; it replaces the default processor, which would upload to OpenAI. `openinference`:
`OpenAIAgentsInstrumentor` exporting OTLP. `chat` runs the agent on
`OpenAIChatCompletionsModel`, `responses` on the SDK's default Responses API model.

The hook: `RunConfig.call_model_input_filter`, the SDK's way to edit the input of each model
call; it rewrites the `function_call_output` items.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402
import scenario  # noqa: E402

from agents import (  # noqa: E402
    Agent,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    RunConfig,
    Runner,
    function_tool,
    set_trace_processors,
)
from agents.run_config import ModelInputData  # noqa: E402
from agents.tracing import TracingProcessor  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402

which = sys.argv[1]
api = sys.argv[2] if len(sys.argv) > 2 else "chat"
sensitive = (sys.argv[3] if len(sys.argv) > 3 else "sensitive") == "sensitive"


class FileProcessor(TracingProcessor):
    """Writes what the SDK exports for each trace and span, one JSON object per line."""

    def __init__(self, path):
        self.f = open(path, "w")

    def on_trace_start(self, trace):
        pass

    def on_trace_end(self, trace):
        if (item := trace.export()) is not None:
            self.f.write(json.dumps(item, ensure_ascii=False) + "\n")

    def on_span_start(self, span):
        pass

    def on_span_end(self, span):
        if (item := span.export()) is not None:
            self.f.write(json.dumps(item, ensure_ascii=False) + "\n")

    def shutdown(self):
        self.f.close()

    def force_flush(self):
        self.f.flush()


provider = None
if which == "own":
    set_trace_processors([FileProcessor(common.OUT)])
else:
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    provider = common.tracer_provider("openai-agents-openinference")
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)


def cut_tool_results(data):
    items = []
    for it in data.model_data.input:
        if isinstance(it, dict) and it.get("type") == "function_call_output" and isinstance(it.get("output"), str):
            tool = scenario.find_tool(it["output"])
            if tool:
                it = dict(it, output=scenario.cut(tool, it["output"]))
        items.append(it)
    return ModelInputData(input=items, instructions=data.model_data.instructions)


client = AsyncOpenAI(base_url=common.MODEL_URL, api_key=common.API_KEY)
model = (OpenAIChatCompletionsModel if api == "chat" else OpenAIResponsesModel)(model="scripted-model", openai_client=client)
tools = [function_tool(fn, name_override=name, description_override=scenario.DESCRIPTIONS[name])
         for name, fn in scenario.TOOLS.items()]
agent = Agent(name="ops_agent", instructions="You are the ops agent.", model=model, tools=tools)
result = Runner.run_sync(agent, "Why does the billing build fail, and which port does it use?",
                         run_config=RunConfig(call_model_input_filter=cut_tool_results,
                                              trace_include_sensitive_data=sensitive,
                                              workflow_name="ops workflow"))
print(result.final_output)
if provider is not None:
    provider.force_flush()
    provider.shutdown()
else:
    from agents.tracing import get_trace_provider

    get_trace_provider().shutdown()

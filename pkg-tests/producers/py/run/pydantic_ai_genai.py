"""pydantic-ai with `Agent.instrument_all()` (OpenTelemetry GenAI conventions).

The hook: a `ProcessHistory` capability (pydantic-ai's history processor), which rewrites
the tool results in the message history before each model request.
"""

import dataclasses
import sys
import os

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402
import scenario  # noqa: E402

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.capabilities.process_history import ProcessHistory  # noqa: E402
from pydantic_ai.messages import ModelRequest, ToolReturnPart  # noqa: E402
from pydantic_ai.models.instrumented import InstrumentationSettings  # noqa: E402
from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402


def cut_tool_results(messages):
    out = []
    for m in messages:
        if isinstance(m, ModelRequest):
            parts = [dataclasses.replace(p, content=scenario.cut(p.tool_name, p.content))
                     if isinstance(p, ToolReturnPart) and isinstance(p.content, str) else p
                     for p in m.parts]
            m = dataclasses.replace(m, parts=parts)
        out.append(m)
    return out


provider = common.tracer_provider("pydantic-ai-agent")
Agent.instrument_all(InstrumentationSettings(tracer_provider=provider))
model = OpenAIChatModel("scripted-model", provider=OpenAIProvider(base_url=common.MODEL_URL, api_key=common.API_KEY))
agent = Agent(model, name="ops_agent", instructions="You are the ops agent.",
              capabilities=[ProcessHistory(cut_tool_results)])
for name, fn in scenario.TOOLS.items():
    agent.tool_plain(fn, name=name, description=scenario.DESCRIPTIONS[name])

result = agent.run_sync("Why does the billing build fail, and which port does it use?")
print(result.output)
provider.force_flush()
provider.shutdown()

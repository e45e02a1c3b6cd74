"""A LangChain agent (`create_agent`) traced by OpenInference or OpenLLMetry.

    langchain_agent.py openinference|openllmetry

The hook: a `wrap_model_call` middleware, LangChain's own way to change the request a model
call gets; it rewrites the ToolMessages' content. The tool spans keep what the tools returned.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402
import scenario  # noqa: E402

which = sys.argv[1]
provider = common.tracer_provider(f"langchain-{which}")
if which == "openinference":
    from openinference.instrumentation.langchain import LangChainInstrumentor

    LangChainInstrumentor().instrument(tracer_provider=provider)
else:
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    LangchainInstrumentor().instrument(tracer_provider=provider)

from langchain.agents import create_agent  # noqa: E402
from langchain.agents.middleware import wrap_model_call  # noqa: E402
from langchain_core.messages import ToolMessage  # noqa: E402
from langchain_core.tools import StructuredTool  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402


@wrap_model_call
def cut_tool_results(request, handler):
    messages = [m.model_copy(update={"content": scenario.cut(m.name, m.content)})
                if isinstance(m, ToolMessage) and isinstance(m.content, str) and m.name in scenario.ACTIONS else m
                for m in request.messages]
    return handler(request.override(messages=messages))


tools = [StructuredTool.from_function(fn, name=name, description=scenario.DESCRIPTIONS[name])
         for name, fn in scenario.TOOLS.items()]
model = ChatOpenAI(model="scripted-model", base_url=common.MODEL_URL, api_key=common.API_KEY)
agent = create_agent(model, tools, system_prompt="You are the ops agent.", middleware=[cut_tool_results])
out = agent.invoke({"messages": [{"role": "user", "content": "Why does the billing build fail, and which port does it use?"}]})
print(out["messages"][-1].content)
provider.force_flush()
provider.shutdown()

"""What every Python producer shares: the endpoints the generator hands it, and the OTel SDK."""

import os

MODEL_URL = os.environ["TOOLSLICE_MODEL_URL"]
OTLP_URL = os.environ.get("TOOLSLICE_OTLP_URL", "")
OUT = os.environ.get("TOOLSLICE_OUT", "")
API_KEY = "sk-scripted"


def tracer_provider(service: str):
    """A TracerProvider exporting with the stock OTLP/HTTP protobuf exporter."""
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=OTLP_URL)))
    trace.set_tracer_provider(provider)
    return provider

"""Decodes OTLP protobuf export requests with the opentelemetry-proto package (the
generated classes the Python exporter itself uses): an independent reader of what the
endpoint forwarded. Prints each request as one line of OTLP JSON (hex ids).

usage: decode.py FILE...
"""
import base64
import json
import sys

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


def hex_ids(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(value, str):
                node[key] = base64.b64decode(value).hex()
            else:
                hex_ids(value)
    elif isinstance(node, list):
        for item in node:
            hex_ids(item)


for path in sys.argv[1:]:
    request = ExportTraceServiceRequest()
    with open(path, "rb") as f:
        request.ParseFromString(f.read())
    doc = json_format.MessageToDict(request)
    hex_ids(doc)
    print(json.dumps(doc))

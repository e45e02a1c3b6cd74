"""An OTLP/HTTP receiver on 127.0.0.1 that writes what the Collector's file exporter writes.

Producers export with their stock OTLP/HTTP protobuf exporters (Python's
opentelemetry-exporter-otlp-proto-http, JS's @opentelemetry/exporter-trace-otlp-proto), as a
user pointing them at a Collector would. Each request body is decoded with the
opentelemetry-proto messages and written as one line of OTLP/JSON in the layout of the
Collector's `file` exporter (pdata's JSON marshaler): lowerCamelCase field names, trace and
span ids as hex (protobuf's JSON mapping would give base64, the one place OTLP/JSON departs
from it), 64-bit integers as decimal strings, enums as integers, default values omitted,
one export request per line.
"""

import base64
import gzip
import json
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

ID_FIELDS = ("traceId", "spanId", "parentSpanId")


def _hex_ids(obj):
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in ID_FIELDS and isinstance(v, str):
                obj[k] = base64.b64decode(v).hex()
            else:
                _hex_ids(v)
    elif isinstance(obj, list):
        for v in obj:
            _hex_ids(v)


def to_file_exporter_line(body: bytes) -> str:
    req = ExportTraceServiceRequest()
    req.ParseFromString(body)
    d = json_format.MessageToDict(req, use_integers_for_enums=True, preserving_proto_field_name=False)
    _hex_ids(d)
    return json.dumps(d, ensure_ascii=False, separators=(",", ":"))


class Collector:
    def __init__(self, forward=None):
        """`forward`: an OTLP/HTTP endpoint (Phoenix's) that also gets every request as sent."""
        self.lines = []
        self.lock = threading.Lock()
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _body(self):
                if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
                    body = b""
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                        if size == 0:
                            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                pass
                            return body
                        body += self.rfile.read(size)
                        self.rfile.readline()
                return self.rfile.read(int(self.headers.get("content-length", 0)))

            def do_POST(self):
                body = self._body()
                if self.headers.get("content-encoding") == "gzip":
                    body = gzip.decompress(body)
                if "json" in (self.headers.get("content-type") or ""):
                    self.send_response(415)
                    self.end_headers()
                    return
                if not body:  # nothing to decode: say so rather than write an empty request
                    self.send_response(400)
                    self.end_headers()
                    return
                line = to_file_exporter_line(body)
                with collector.lock:
                    collector.lines.append(line)
                if forward:
                    req = urllib.request.Request(forward, data=body, method="POST",
                                                 headers={"content-type": "application/x-protobuf"})
                    urllib.request.urlopen(req, timeout=30).read()
                out = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def endpoint(self):
        return f"http://127.0.0.1:{self.port}/v1/traces"

    def close(self):
        self.httpd.shutdown()

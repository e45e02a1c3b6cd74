#!/usr/bin/env python3
"""Parse every line of a JSON-lines file with orjson or the standard json module: the floor a
Python user's own OTLP reader starts from. A peer row of scripts/bench.

    python3 scripts/peers/json_lines.py orjson|json FILE   # prints the number of documents
"""
import sys

lib = sys.argv[1]
if lib == "orjson":
    import orjson

    loads = orjson.loads
else:
    import json

    loads = json.loads
n = 0
with open(sys.argv[2], "rb") as f:
    for line in f:
        if line.strip():
            loads(line)
            n += 1
print(n)

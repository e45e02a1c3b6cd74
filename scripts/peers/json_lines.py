#!/usr/bin/env python3
"""Parse every line of a JSON-lines file with orjson or the standard json module: the floor a
Python user's own OTLP reader starts from. A peer row of scripts/bench.

    python3 scripts/peers/json_lines.py orjson|json FILE            # prints the number of documents
    python3 scripts/peers/json_lines.py orjson|json FILE ROUNDS     # in one process: the lines read
        into memory first, then parsed ROUNDS times; prints {"documents": N, "seconds": [...]}
        (the endpoint's comparison: a server parses each request it is sent)
"""
import json
import sys
import time

lib = sys.argv[1]
if lib == "orjson":
    import orjson

    loads = orjson.loads
else:
    loads = json.loads

if len(sys.argv) > 3:
    with open(sys.argv[2], "rb") as f:
        lines = [line for line in f if line.strip()]
    seconds = []
    for _ in range(int(sys.argv[3])):
        start = time.perf_counter()
        for line in lines:
            loads(line)
        seconds.append(time.perf_counter() - start)
    print(json.dumps({"documents": len(lines), "seconds": seconds}))
    sys.exit(0)

n = 0
with open(sys.argv[2], "rb") as f:
    for line in f:
        if line.strip():
            loads(line)
            n += 1
print(n)

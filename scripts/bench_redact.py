#!/usr/bin/env python3
"""Redaction side by side: toolslice and Yelp's detect-secrets on the same labelled corpus.

    scripts/bench_redact.py [--json]      (pip install detect-secrets for the comparison)

The corpus is crate/core/tests/fixtures/redact/{positives,negatives}.jsonl (fake secrets in the
shape of real ones, and hard look-alikes: git SHAs, UUIDs, digests, integrity strings,
base64 images ...). For each tool it reports recall (positives flagged), precision (flagged
samples that are positives), false positives on the negatives, and time per sample.
toolslice also reports strict recall: every listed secret substring gone from its output
(detect-secrets only reports a line, it does not rewrite text). Samples whose rule needs a
policy toolslice keeps off by default (e-mail, SSN) are compared with that policy on for
toolslice and are counted for detect-secrets as they come (it has no such plugins).
"""
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "crate/core/tests/fixtures/redact"


def load(name):
    return [json.loads(l) for l in (CORPUS / name).read_text().splitlines() if l.strip()]


def run_toolslice(files):
    out = subprocess.run(
        ["cargo", "run", "-q", "--release", "--example", "redact_corpus", "--", *map(str, files)],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    return {r["id"]: r for r in map(json.loads, out.splitlines())}


def run_detect_secrets(samples):
    try:
        from detect_secrets import SecretsCollection
        from detect_secrets.settings import default_settings
    except ImportError:
        return None
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for s in samples:
            p = Path(tmp) / f"{s['id']}.txt"
            p.write_text(s["text"])
            paths[s["id"]] = p
        start = time.perf_counter()
        for sid, p in paths.items():
            coll = SecretsCollection()
            with default_settings():
                coll.scan_file(str(p))
            found = [sec.type for _, sec in coll]
            results[sid] = {"flagged": bool(found), "rules": sorted(set(found))}
        elapsed = time.perf_counter() - start
    per = elapsed * 1e6 / max(len(samples), 1)
    for r in results.values():
        r["us"] = per
    return results


def score(name, results, positives, negatives, strict=False):
    tp = sum(results[p["id"]]["flagged"] for p in positives)
    fp = sum(results[n["id"]]["flagged"] for n in negatives)
    row = {
        "tool": name,
        "positives": len(positives),
        "negatives": len(negatives),
        "recall": tp / len(positives),
        "precision": tp / (tp + fp) if tp + fp else None,
        "false_positives": fp,
        "us_per_sample": sum(r["us"] for r in results.values()) / len(results),
        "missed": [p["id"] for p in positives if not results[p["id"]]["flagged"]],
        "false_positive_ids": [n["id"] for n in negatives if results[n["id"]]["flagged"]],
    }
    if strict:
        row["strict_recall"] = sum(bool(results[p["id"]].get("secrets_gone")) for p in positives) / len(positives)
    return row


def main():
    positives, negatives = load("positives.jsonl"), load("negatives.jsonl")
    rows = [score("toolslice", run_toolslice([CORPUS / "positives.jsonl", CORPUS / "negatives.jsonl"]), positives, negatives, strict=True)]
    ds = run_detect_secrets(positives + negatives)
    if ds is None:
        print("detect-secrets is not installed (pip install detect-secrets): showing toolslice only", file=sys.stderr)
    else:
        rows.append(score("detect-secrets", ds, positives, negatives))
    if "--json" in sys.argv:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'tool':<16} {'recall':>7} {'strict':>7} {'precision':>9} {'FP':>4} {'us/sample':>10}")
    for r in rows:
        strict = f"{r['strict_recall']:.3f}" if "strict_recall" in r else "-"
        prec = f"{r['precision']:.3f}" if r["precision"] is not None else "-"
        print(f"{r['tool']:<16} {r['recall']:>7.3f} {strict:>7} {prec:>9} {r['false_positives']:>4} {r['us_per_sample']:>10.1f}")
    for r in rows:
        if r["missed"]:
            print(f"{r['tool']} missed: {', '.join(r['missed'])}")
        if r["false_positive_ids"]:
            print(f"{r['tool']} false positives: {', '.join(r['false_positive_ids'])}")


if __name__ == "__main__":
    main()

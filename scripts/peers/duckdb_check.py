#!/usr/bin/env python3
"""DuckDB doing what `toolslice check FILE` does on span JSONL: classify every record as seed
000's clip_check.py does (plus toolslice's rule that an open span is incomplete), print the
table worst first, then the counts. A peer row of scripts/bench, not part of toolslice.

    python3 scripts/peers/duckdb_check.py FILE [THREADS]   # the table on stdout
"""
import sys

import duckdb

path = sys.argv[1]
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 2
con = duckdb.connect()
con.execute(f"SET threads = {threads}")
con.execute(
    """
CREATE TEMP TABLE c AS
WITH s AS (
  SELECT row_number() OVER () AS line, *
  FROM read_ndjson(?, columns = {
    span_id: 'VARCHAR', name: 'VARCHAR', status: 'VARCHAR', observed_bytes: 'BIGINT',
    injected_bytes: 'BIGINT', injected_tokens: 'BIGINT', clip_reason: 'VARCHAR',
    sha256_observed: 'VARCHAR', sha256_injected: 'VARCHAR'})
), k AS (
  SELECT *, coalesce(nullif(clip_reason, ''), 'none') AS reason,
    printf('ratio=%.2f', CASE WHEN observed_bytes <= 0 THEN 0.0
                              ELSE 1.0 - injected_bytes / observed_bytes END) AS ratio
  FROM s WHERE name IS NOT NULL AND name <> ''
)
SELECT line, span_id, name, observed_bytes, injected_bytes,
  CASE
    WHEN observed_bytes IS NULL OR injected_bytes IS NULL OR injected_tokens IS NULL THEN 1
    WHEN status IS NOT NULL AND status NOT IN ('ok', 'error') THEN 1
    WHEN injected_bytes < observed_bytes AND reason = 'none' THEN 0
    WHEN injected_bytes < observed_bytes THEN 3
    WHEN sha256_observed <> '' AND sha256_injected <> '' AND sha256_observed <> sha256_injected
         AND reason = 'none' THEN 2
    ELSE 4 END AS priority,
  CASE
    WHEN observed_bytes IS NULL OR injected_bytes IS NULL OR injected_tokens IS NULL THEN
      concat_ws(',', CASE WHEN observed_bytes IS NULL THEN 'observed_bytes' END,
                     CASE WHEN injected_bytes IS NULL THEN 'injected_bytes' END,
                     CASE WHEN injected_tokens IS NULL THEN 'injected_tokens' END)
    WHEN status IS NOT NULL AND status NOT IN ('ok', 'error') THEN 'status=' || status
    WHEN injected_bytes < observed_bytes AND reason = 'none' THEN ratio
    WHEN injected_bytes < observed_bytes THEN reason || ',' || ratio
    WHEN sha256_observed <> '' AND sha256_injected <> '' AND sha256_observed <> sha256_injected
         AND reason = 'none' THEN 'bytes_match_but_hash_differs'
    ELSE '' END AS detail
FROM k
""",
    [path],
)
out = sys.stdout
out.write(f"{'status':<16} {'span':<12} {'tool':<16} {'obs':>8} {'inj':>8} detail\n")
names = ["silent_clip", "incomplete", "hash_mismatch", "clipped", "ok"]
cur = con.execute(
    """SELECT priority, coalesce(span_id, '-'), name, coalesce(observed_bytes, 0),
              coalesce(injected_bytes, 0), detail
       FROM c ORDER BY priority, line"""
)
while True:
    rows = cur.fetchmany(65536)
    if not rows:
        break
    out.write(
        "".join(
            f"{names[p]:<16} {sid:<12} {name:<16} {obs:>8} {inj:>8} {detail}\n"
            for p, sid, name, obs, inj, detail in rows
        )
    )
counts = dict(con.execute("SELECT priority, count(*) FROM c GROUP BY priority").fetchall())
total = sum(counts.values())
out.write(f"\n# silent_clip={counts.get(0, 0)} incomplete={counts.get(1, 0)} total={total}\n")
sys.exit(1 if counts.get(0) or counts.get(1) else 0)

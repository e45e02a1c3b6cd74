#!/usr/bin/env python3
"""Runs one command as scripts/bench times a whole process, and prints on stderr, as its last
line: wall seconds, user CPU seconds, system CPU seconds, peak RSS in KiB.

    python3 scripts/bench-run.py CMD [ARG...]

GNU time's `%e` prints the wall time cut to hundredths of a second, which the bench used until
2026-12-07: a 0.25 s run and a 0.22 s one were 0.25 and 0.22 whether they took 0.2599 and
0.2200 or 0.2500 and 0.2299, so a ratio of them could be off by up to 4.5% (up to 17% for the
fixture's 0.06 and 0.08 s runs). Here the
clock is read around the child's spawn and reaping (microseconds), and the CPU times and peak
RSS come from `wait4` (the child's own rusage, not this interpreter's). The child inherits
stdin, stdout and stderr; this program's exit status is the child's (128 + N for a signal).
"""
import os
import sys
import time


def main() -> int:
    argv = sys.argv[1:]
    if not argv:
        print("usage: python3 scripts/bench-run.py CMD [ARG...]", file=sys.stderr)
        return 2
    start = time.perf_counter()
    try:
        pid = os.posix_spawnp(argv[0], argv, os.environ)
    except OSError as err:
        print(f"bench-run: {argv[0]}: {err.strerror}", file=sys.stderr)
        return 127
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    # Linux reports ru_maxrss in KiB.
    print(f"{wall:.6f} {usage.ru_utime:.6f} {usage.ru_stime:.6f} {usage.ru_maxrss}", file=sys.stderr)
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main())

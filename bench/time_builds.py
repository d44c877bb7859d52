#!/usr/bin/env python3
"""Times the load of one profile by several tfprof binaries in one run.

Usage: time_builds.py PROFILE LABEL=BINARY [LABEL=BINARY ...]

Each binary loads PROFILE and exits (`--script=/dev/null`: no query). The
binaries take turns, five rounds, so that a slow spell of the machine hits
them alike; the table shows each one's minimum and median wall time, its
peak RSS, and its ratio to the first binary's minimum.
"""
import os
import statistics
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    profile = sys.argv[1]
    builds = [arg.split("=", 1) for arg in sys.argv[2:]]
    times = {label: [] for label, _ in builds}
    peak = {}
    for _ in range(5):
        for label, binary in builds:
            # Peak RSS of one child: ru_maxrss of RUSAGE_CHILDREN is the
            # largest child so far, so measure each binary in a fresh
            # grandchild.
            code = ("import resource,subprocess,sys;"
                    "subprocess.run(sys.argv[1:],check=True,"
                    "stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL);"
                    "print(resource.getrusage(resource.RUSAGE_CHILDREN)"
                    ".ru_maxrss)")
            t0 = time.perf_counter()
            out = subprocess.run(
                [sys.executable, "-c", code, binary,
                 "--profile_path=" + profile, "--script=/dev/null"],
                check=True, capture_output=True, text=True).stdout
            times[label].append(time.perf_counter() - t0)
            peak[label] = max(peak.get(label, 0), int(out.split()[-1]))
    size_mb = os.path.getsize(profile) / 1e6
    base = min(times[builds[0][0]])
    print(f"profile: {size_mb:.0f} MB; load and exit, 5 rounds taken in turn")
    print("| build | min | median | peak RSS | min / first build's min |")
    print("|---|---|---|---|---|")
    for label, binary in builds:
        t = times[label]
        print(f"| {label} ({binary}) | {min(t):.2f} s | "
              f"{statistics.median(t):.2f} s | {peak[label] / 1024:.0f} MB | "
              f"{min(t) / base:.2f}x |")


if __name__ == "__main__":
    main()

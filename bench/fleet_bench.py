#!/usr/bin/env python3
"""The fleet row: tfprof.fleet.summarize over many generated rank traces on
a Dask LocalCluster (2 worker processes, 1 thread each): wall time, time per
rank, each worker's peak RSS (and its RSS before the run, tfprof and pandas
imported), and the bytes of summaries that travelled.

Usage (Debian's python3, the package built; bench/run.sh --fleet [ARGS]
does both):
  PYTHONPATH=build/python /usr/bin/python3 bench/fleet_bench.py \
      [--ranks 256] [--steps 100] [--ops 400] [--workers 2]
--ops 400 --steps 100 makes ~20 MB per rank (Kineto JSON, uncompressed).
"""

import argparse
import multiprocessing
import os
import resource
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python",
                                "tests"))

import rank_traces  # noqa: E402


def _write(args):
    out_dir, rank, world, steps, ops = args
    path = os.path.join(out_dir, "rank_%d.pt.trace.json" % rank)
    with open(path, "w") as f:
        f.write(rank_traces.rank_trace(rank, world, steps, ops))
    return path


def _import_tfprof():
    import tfprof  # noqa: F401  (and pandas, as summarize needs)


def _peak_rss_kib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranks", type=int, default=256)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--ops", type=int, default=400)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    import tfprof
    from distributed import Client, LocalCluster

    tmp = tempfile.mkdtemp(prefix="tfprof_fleet.")
    try:
        t0 = time.time()
        with multiprocessing.Pool(args.workers) as pool:
            paths = pool.map(_write, [(tmp, r, args.ranks, args.steps,
                                       args.ops) for r in range(args.ranks)])
        made = time.time() - t0
        total = sum(os.path.getsize(p) for p in paths)
        with LocalCluster(n_workers=args.workers, threads_per_worker=1,
                          processes=True, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            # Workers up, tfprof and pandas imported, before the clock
            # starts: their RSS then is the interpreter's own.
            client.run(_import_tfprof)
            idle = sorted(client.run(_peak_rss_kib).values())
            t0 = time.time()
            result = tfprof.fleet.summarize(paths, client=client)
            wall = time.time() - t0
            peaks = sorted(client.run(_peak_rss_kib).values())
        mb = total / len(paths) / 1e6
        print("generated %d rank traces (%.1f MB each, %.2f GB) in %.0f s" %
              (len(paths), mb, total / 1e9, made), file=sys.stderr)
        print("| ranks | trace size | workers | fleet summary | per rank | "
              "peak RSS per worker | of which idle worker | peak RSS / trace"
              " | summaries |")
        print("|---|---|---|---|---|---|---|---|---|")
        print("| %d | %.1f MB | %d (LocalCluster, 1 thread each) | %.1f s | "
              "%.0f ms | %s | %s | %.1fx | %.1f MB |" % (
                  len(paths), mb, args.workers, wall,
                  1000 * wall / len(paths),
                  ", ".join("%.0f MB" % (p / 1024) for p in peaks),
                  ", ".join("%.0f MB" % (p / 1024) for p in idle),
                  max(peaks) * 1024 / (total / len(paths)),
                  result.summary_bytes / 1e6))
        assert len(result.steps) == args.ranks * args.steps
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

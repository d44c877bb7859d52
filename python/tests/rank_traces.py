"""Generated rank traces for the fleet tests and bench: one PyTorch
profiler (Kineto) trace per rank of a data-parallel job, with ProfilerStep
ranges, CPU ops launching GPU kernels (linked by correlation ids), one NCCL
all-reduce per step, a GPU allocation and its free in the first op of each
step ("[memory]" samples of the allocator's bytes in use: peak_bytes(rank)
at most), a per-rank clock offset and one slow rank (a straggler). Seeded:
the same arguments give the same files.

Usage: rank_traces.py OUT_DIR RANKS [STEPS [OPS_PER_STEP]]
"""

import json
import os
import random
import sys

OPS = ["aten::mm", "aten::add", "aten::relu", "aten::addmm", "aten::mul"]
KERNELS = {"aten::mm": "volta_sgemm_128x64_nn", "aten::add":
           "vectorized_elementwise_kernel<add>", "aten::relu":
           "vectorized_elementwise_kernel<relu>", "aten::addmm":
           "volta_sgemm_64x64_nn", "aten::mul":
           "vectorized_elementwise_kernel<mul>"}


MIB = 1 << 20


def peak_bytes(rank, steps):
    """The largest GPU bytes in use the rank's [memory] samples show."""
    return max(BASE_BYTES + step_bytes(rank, s) for s in range(steps))


BASE_BYTES = 256 * MIB


def step_bytes(rank, step):
    """What the first op of `step` allocates on rank `rank`'s GPU."""
    return (rank % 7 + 1) * MIB + (step % 5) * 4 * MIB


def memory_event(ts, addr, nbytes, total):
    return ('{"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": '
            '"[memory]", "pid": 100, "tid": 100, "ts": %.3f, "args": {"Addr":'
            ' %d, "Bytes": %d, "Total Allocated": %d, "Total Reserved": %d, '
            '"Device Type": 1, "Device Id": 0}}' % (ts, addr, nbytes, total,
                                                   total))


def rank_trace(rank, world, steps, ops_per_step, straggler=3):
    """One rank's trace as JSON text."""
    rng = random.Random(rank * 1000003 + world)
    offset = rank * 137.0  # this rank's clock offset, microseconds
    slow = 1.6 if rank == straggler % world else 1.0
    events = []
    t = 1000.0 + offset
    corr = 1
    for step in range(steps):
        step_start = t
        cpu = t + 5
        gpu = t + 20
        for i in range(ops_per_step):
            op = OPS[i % len(OPS)]
            dur = round(rng.uniform(8, 30) * slow, 3)
            ext = step * ops_per_step + i + 1
            events.append(
                '{"ph": "X", "cat": "cpu_op", "name": "%s", "pid": 100, '
                '"tid": 100, "ts": %.3f, "dur": %.3f, "args": {"External id":'
                ' %d}}' % (op, cpu, dur + 6, ext))
            events.append(
                '{"ph": "X", "cat": "cuda_runtime", "name": '
                '"cudaLaunchKernel", "pid": 100, "tid": 100, "ts": %.3f, '
                '"dur": 4.0, "args": {"correlation": %d, "External id": %d}}'
                % (cpu + 1, corr, ext))
            kdur = round(rng.uniform(10, 40) * slow, 3)
            gpu = max(gpu, cpu + 3)
            events.append(
                '{"ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": '
                '7, "ts": %.3f, "dur": %.3f, "args": {"device": 0, "stream": '
                '7, "correlation": %d, "External id": %d}}'
                % (KERNELS[op], gpu, kdur, corr, ext))
            if i == 0:  # the step's allocation, freed before the op ends
                nbytes = step_bytes(rank, step)
                addr = 0x7f0000000000 + step * 0x1000000
                events.append(memory_event(cpu + 1, addr, nbytes,
                                           BASE_BYTES + nbytes))
                events.append(memory_event(cpu + 2, addr, -nbytes,
                                           BASE_BYTES))
            corr += 1
            cpu += dur + 8
            gpu += kdur + 1
        # The all-reduce: every rank's ends when the slowest rank's starts.
        ext = (step + 1) * 1000000 + rank
        events.append(
            '{"ph": "X", "cat": "cpu_op", "name": "nccl:all_reduce", "pid": '
            '100, "tid": 100, "ts": %.3f, "dur": 10.0, "args": {"External '
            'id": %d}}' % (cpu, ext))
        events.append(
            '{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", '
            '"pid": 100, "tid": 100, "ts": %.3f, "dur": 4.0, "args": '
            '{"correlation": %d, "External id": %d}}' % (cpu + 1, corr, ext))
        wait = 50.0 if slow == 1.0 else 5.0
        events.append(
            '{"ph": "X", "cat": "kernel", "name": '
            '"ncclKernel_AllReduce_RING_LL_Sum_float", "pid": 0, "tid": 24, '
            '"ts": %.3f, "dur": %.3f, "args": {"device": 0, "stream": 24, '
            '"correlation": %d, "External id": %d}}'
            % (max(gpu, cpu + 3), wait + 40.0, corr, ext))
        corr += 1
        t = max(gpu, cpu + 3) + wait + 60.0
        events.append(
            '{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d",'
            ' "pid": 100, "tid": 100, "ts": %.3f, "dur": %.3f}'
            % (step, step_start, t - step_start - 1))
    header = json.dumps({"schemaVersion": 1, "distributedInfo": {
        "backend": "nccl", "rank": rank, "world_size": world}})
    return header[:-1] + ', "traceEvents": [\n' + ",\n".join(events) + "\n]}\n"


def write_ranks(out_dir, ranks, steps=8, ops_per_step=20):
    """Writes rank_<r>.pt.trace.json for each rank; returns their paths."""
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for r in range(ranks):
        path = os.path.join(out_dir, "rank_%d.pt.trace.json" % r)
        with open(path, "w") as f:
            f.write(rank_trace(r, ranks, steps, ops_per_step))
        paths.append(path)
    return paths


if __name__ == "__main__":
    args = sys.argv[1:]
    write_ranks(args[0], int(args[1]), *(int(a) for a in args[2:4]))

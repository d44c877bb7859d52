"""Damaged inputs through the Python loader: truncated and mutated corpus
files (seeded, so every run tries the same ones) either load or raise
TfprofError with the message the command line prints for the same files
(and the command line fails on them too); none crashes the interpreter. A
load that succeeds is queried too (the views, steps, summary), and the
command line loads that file as well."""

import gzip
import os
import random
import zlib

import pytest

import tfprof
from conftest import CORPUS, TF_CURRENT

# (load keyword, corpus file, gunzip first)
INPUTS = [
    ("profile_path", "shiyudian-resnet-tf-dist/profile_0_tiny", False),
    ("graph_path", "tf-testdata/current/graph.pbtxt", False),
    ("run_meta_path", "tf-testdata/current/run_meta", False),
    ("op_log_path", "tf-testdata/current/tfprof_log", False),
    ("trace_path", "hta/cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
     True),
    ("trace_path", "tf1-timelines/dlprof_mnist_xla_timeline_xla.ctf.json",
     False),
    ("trace_path", "yaroslavvb-stuff/dynamic_stitch_gpu_profile.json", False),
    ("trace_path", "gpu-h200-2026/jax_lm_cb.xplane.pb.gz", True),
]

CASES_PER_INPUT = 24


def damaged(data, rng):
    """Truncations at random points and runs of random bytes."""
    out = []
    for _ in range(CASES_PER_INPUT // 2):
        out.append(data[:rng.randrange(len(data))])
    for _ in range(CASES_PER_INPUT // 2):
        b = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            at = rng.randrange(len(b))
            n = rng.randint(1, 16)
            b[at:at + n] = bytes(rng.randrange(256) for _ in range(n))
        out.append(bytes(b))
    return out


def damaged_inputs(keyword, path):
    """load()'s keywords for a damaged file (with the undamaged files it
    needs beside it)."""
    kwargs = {keyword: path}
    if keyword in ("run_meta_path", "op_log_path"):
        kwargs["graph_path"] = os.path.join(TF_CURRENT, "graph.pbtxt")
    if keyword == "graph_path":
        kwargs["run_meta_path"] = os.path.join(TF_CURRENT, "run_meta")
    return kwargs


def cli_flags(kwargs):
    return ["--%s=%s" % (k, v) for k, v in sorted(kwargs.items())]


@pytest.mark.parametrize("keyword,name,gunzip", INPUTS)
def test_damaged_inputs_load_or_fail_cleanly(cli, tmp_path, keyword, name,
                                             gunzip):
    with open(os.path.join(CORPUS, name), "rb") as f:
        data = f.read()
    if gunzip:
        data = gzip.decompress(data)
    rng = random.Random(zlib.crc32(name.encode()))
    loaded = failed = 0
    for i, bad in enumerate(damaged(data, rng)):
        path = tmp_path / ("bad%d_%s" % (i, os.path.basename(name)))
        if name.endswith(".gz") and i % 2 == 0:
            bad = gzip.compress(bad)  # and damaged inside gzip
        path.write_bytes(bad)
        kwargs = damaged_inputs(keyword, str(path))
        try:
            run = tfprof.load(**kwargs)
        except tfprof.TfprofError as e:
            assert str(e), "an error without a message"
            assert "\n" not in str(e).strip(), str(e)
            message, status = cli.error(cli_flags(kwargs) + ["summary"])
            assert str(e) == message
            assert status == 1  # a load error on the command line
            failed += 1
            continue
        loaded += 1
        cli.run(cli_flags(kwargs) + ["summary"])  # loads there too
        for view in ("scope", "op", "code"):
            try:
                run.view(view, max_depth=3)
            except tfprof.TfprofError as e:  # e.g. no call stacks
                assert str(e)
        run.steps()
        run.summary()
    assert loaded + failed == CASES_PER_INPUT
    assert failed > 0  # truncated inputs must be noticed

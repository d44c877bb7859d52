"""Several ranks from Python: load(...).ranks() and fleet.summarize's
cross-rank analysis equal the command line's `ranks -output json` for the
same traces (the bundled two-rank DDP capture, whose rank 1 was held 30 ms
before steps 3 and 5, and generated ranks)."""

import os

import pytest

import tfprof
from conftest import ROOT
from rank_traces import write_ranks

DDP = os.path.join(ROOT, "testdata", "ranks", "ddp-gloo")
DDP_FILES = [os.path.join(DDP, "ddp2_rank%d.pt.trace.json.gz" % r)
             for r in (0, 1)]


def test_loaded_ranks_are_the_cli_ranks(cli):
    doc = cli.json(["--trace_path=" + DDP, "ranks", "-output", "json"])
    rank_steps, stragglers = tfprof.load(trace_path=DDP).ranks()
    assert rank_steps.attrs["analysis"] == doc
    assert len(rank_steps) == sum(len(r["steps"]) for r in doc["ranks"])
    assert stragglers.to_dict("records") == doc["stragglers"]
    # The injected delay is found: rank 1, steps 3 and 5.
    assert sorted(stragglers["step"]) == [3, 5]
    assert set(stragglers["rank"]) == {1}
    assert set(stragglers["cause"]) == {"injected_delay"}


def test_fleet_analysis_is_the_cli_analysis(cli):
    doc = cli.json(["--trace_path=" + ",".join(DDP_FILES), "ranks", "-output",
                    "json"])
    fleet = tfprof.fleet.summarize(DDP_FILES)
    assert tfprof.fleet.has_rank_analysis()
    assert fleet.analysis == doc
    assert fleet.stragglers.to_dict("records") == doc["stragglers"]
    assert len(fleet.rank_steps) == 10  # 2 ranks x 5 steps


def test_generated_fleet_on_dask_equals_cli(cli, tmp_path):
    paths = write_ranks(str(tmp_path), 8, steps=4, ops_per_step=6)
    doc = cli.json(["--trace_path=" + str(tmp_path), "ranks", "-output",
                    "json"])
    in_process = tfprof.fleet.summarize(paths)
    assert in_process.analysis == doc
    assert doc["collectives_matched"] == 4
    assert [r["rank"] for r in doc["ranks"]] == list(range(8))


def test_bad_summary_bytes_raise():
    with pytest.raises(tfprof.TfprofError, match="rank summary 0: not a "
                       "tfprof rank summary"):
        tfprof._tfprof.analyze_ranks([b"{}"])

"""tfprof.fleet on Dask: a LocalCluster with 2 workers summarizing 64
generated rank traces gives the same result as the in-process run, and a
rank's figures are the command line's for its trace."""

import pandas as pd
import pytest
from distributed import Client, LocalCluster

import tfprof
from rank_traces import write_ranks

RANKS = 64


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    return write_ranks(str(tmp_path_factory.mktemp("ranks")), RANKS, steps=6,
                       ops_per_step=12)


@pytest.fixture(scope="module")
def in_process(paths):
    return tfprof.fleet.summarize(paths)


def test_local_cluster_equals_in_process(paths, in_process):
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, \
            Client(cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        on_dask = tfprof.fleet.summarize(paths, client=client)
    assert on_dask.ranks == in_process.ranks == list(range(RANKS))
    for table in ("steps", "devices", "kernels", "runs"):
        pd.testing.assert_frame_equal(getattr(on_dask, table),
                                      getattr(in_process, table))
    assert on_dask.analysis == in_process.analysis
    assert on_dask.notes == in_process.notes
    # Only summaries travelled: far smaller than the traces.
    total = sum(open(p, "rb").seek(0, 2) for p in paths)
    assert on_dask.summary_bytes < total / 4


def test_rank_figures_are_the_cli_figures(cli, paths, in_process):
    for rank in (0, 3, RANKS - 1):
        doc = cli.json(["--trace_path=" + paths[rank], "steps", "-output",
                        "json"])
        mine = in_process.steps[in_process.steps["rank"] == rank]
        assert mine.drop(columns="rank").to_dict("records") == doc["steps"]
    # The generated straggler (rank 3) has the longest steps.
    walls = in_process.steps.groupby("rank")["wall_micros"].mean()
    assert walls.idxmax() == 3
    assert len(in_process.steps) == RANKS * 6


def test_analysis_waits_for_the_library():
    if tfprof.fleet.has_rank_analysis():
        pytest.skip("the library's cross-rank analysis is built in")
    result = tfprof.fleet.summarize([])
    assert result.analysis is None
    assert "issue #31" in result.notes[0]

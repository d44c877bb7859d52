"""tfprof.fleet on Dask: a LocalCluster with 2 workers summarizing 64
generated rank traces gives the same result as the in-process run, and a
rank's figures are the command line's for its trace."""

import pandas as pd
import pytest
from distributed import Client, LocalCluster

import tfprof
from rank_traces import peak_bytes, write_ranks

RANKS = 64
STEPS = 6


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    return write_ranks(str(tmp_path_factory.mktemp("ranks")), RANKS, steps=STEPS,
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
    for table in ("steps", "devices", "kernels", "memory", "runs"):
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
    assert len(in_process.steps) == RANKS * STEPS


def test_memory_peaks_are_the_generated_ones(cli, paths, in_process):
    memory = in_process.memory
    assert memory["rank"].tolist() == list(range(RANKS))
    assert memory["name"].unique().tolist() == ["GPU_0"]
    for rank in range(RANKS):
        # The generator's own peak (bytes in use at its largest sample).
        assert memory["peak_bytes"][rank] == peak_bytes(rank, STEPS), rank
    doc = cli.json(["--trace_path=" + paths[5], "summary", "-output",
                    "json"])
    mine = memory[memory["rank"] == 5].drop(columns="rank")
    assert mine.to_dict("records") == doc["allocators"]


def test_kernels_are_the_cli_kernel_view(cli, paths, in_process):
    rank = 7
    doc = cli.json(["--trace_path=" + paths[rank], "kernel", "-max_depth",
                    "1000000", "-order_by", "micros", "-output", "json"])
    mine = in_process.kernels[in_process.kernels["rank"] == rank]
    names = [c["name"] for c in doc["root"]["children"]]
    assert mine["name"].tolist()[1:] == names
    assert (mine["micros_total"].tolist()[1:] ==
            [c["micros"]["total"] for c in doc["root"]["children"]])


def test_analysis_frames_follow_the_ranks_contract():
    # The shape of `ranks -output json` (issue #31's contract), reshaped
    # into a row per rank and step and a row per straggler.
    doc = {"ranks": [
        {"rank": 0, "file": "a", "offset_micros": 0.0,
         "offset_uncertainty_micros": 1.0,
         "steps": [{"step": 1, "wall_micros": 10.0, "wait_micros": 4.0},
                   {"step": 2, "wall_micros": 11.0, "wait_micros": 0.0}]},
        {"rank": 1, "file": "b", "offset_micros": 7.5,
         "offset_uncertainty_micros": 2.0,
         "steps": [{"step": 1, "wall_micros": 10.5, "wait_micros": 0.0}]}],
        "stragglers": [{"step": 1, "rank": 1, "delay_micros": 4.0,
                        "cause": "injected_delay", "cause_micros": 3.9}],
        "collectives_matched": 2, "notes": []}
    steps, stragglers = tfprof.fleet.analysis_frames(doc)
    assert steps[["rank", "file", "step", "offset_micros"]].values.tolist() == [
        [0, "a", 1, 0.0], [0, "a", 2, 0.0], [1, "b", 1, 7.5]]
    assert steps["wait_micros"].tolist() == [4.0, 0.0, 0.0]
    assert stragglers.to_dict("records") == doc["stragglers"]


def test_analysis_waits_for_the_library():
    if tfprof.fleet.has_rank_analysis():
        pytest.skip("the library's cross-rank analysis is built in")
    result = tfprof.fleet.summarize([])
    assert result.analysis is None
    assert result.rank_steps.empty and result.stragglers.empty
    assert "issue #31" in result.notes[0]

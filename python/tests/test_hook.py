"""tfprof.ProfilerHook around a small PyTorch (CPU) training loop, with
Debian's torch: the timelines appear at the right steps, each loads in
tfprof (the command line and the Python loader), and its ops' self times
equal torch's own key_averages() for that step."""

import json
import os

import pytest
import torch

import tfprof


def make_loop(seed=0):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(16, 32), torch.randint(0, 10, (16,))

    def train_step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    return train_step


def run(hook, steps, context):
    """Trains `steps` steps; returns {timeline path: torch's profiler of
    that step} for each step the hook traced."""
    train_step = make_loop()
    averages = {}
    for _ in range(steps):
        before = len(hook.written)
        if context:
            with hook:
                train_step()
        else:
            train_step()
            hook.step()
        if len(hook.written) > before:
            averages[hook.written[-1]] = hook.last_profile
    hook.close()
    return averages


@pytest.mark.parametrize("context", [True, False])
def test_timelines_at_the_right_steps(tmp_path, context):
    hook = tfprof.ProfilerHook(save_steps=3, output_dir=str(tmp_path))
    averages = run(hook, 10, context)
    names = sorted(os.listdir(tmp_path), key=lambda n: int(n[9:-5]))
    # As TensorFlow's hook: never the first step, then every 3rd.
    assert names == ["timeline-3.json", "timeline-6.json", "timeline-9.json"]
    assert sorted(averages) == sorted(str(tmp_path / n) for n in names)


def test_self_times_equal_key_averages(cli, tmp_path):
    hook = tfprof.ProfilerHook(save_steps=2, output_dir=str(tmp_path))
    averages = run(hook, 5, context=True)
    assert len(averages) == 2
    clamped = 0
    for path, prof in averages.items():
        ops = tfprof.load(trace_path=path).op(
            max_depth=1000, select=["micros", "occurrence"])
        rows = {r["name"]: r for r in ops.to_dict("records")[1:]}
        expected = {e.key: e for e in prof.key_averages()}
        assert set(rows) == set(expected)
        for name, e in expected.items():
            mine = rows[name]["micros_self"]
            events = [f.self_cpu_time_total for f in prof.function_events
                      if f.key == name]
            if min(events) >= 0:
                # Both in whole microseconds: the trace's timestamps are.
                assert mine == round(e.self_cpu_time_total), (
                    name, rows[name], e.self_cpu_time_total)
            else:
                # torch's own figure is negative where an op's children,
                # rounded to whole microseconds, outlast it: tfprof counts
                # such an op's self time as 0.
                assert mine == round(sum(max(t, 0) for t in events)), name
                clamped += 1
        # The command line loads it to the same figures.
        doc = cli.json(["--trace_path=" + path, "op", "-max_depth", "1000",
                        "-output", "json"])
        assert {c["name"]: c["micros"]["self"] for c in doc["root"]["children"]
                } == {n: r["micros_self"] for n, r in rows.items()}


def test_save_secs(tmp_path):
    hook = tfprof.ProfilerHook(save_secs=1e-6, output_dir=str(tmp_path))
    run(hook, 4, context=False)
    # Every step after the first is due (the interval has always passed).
    assert sorted(os.listdir(tmp_path)) == [
        "timeline-2.json", "timeline-3.json", "timeline-4.json"]


@pytest.mark.parametrize("kwargs", [{}, {"save_steps": 2, "save_secs": 1.0},
                                    {"save_steps": 0}])
def test_exactly_one_of_save_steps_and_save_secs(kwargs):
    with pytest.raises(tfprof.TfprofError, match="ProfilerHook"):
        tfprof.ProfilerHook(**kwargs)


@pytest.mark.parametrize("show_memory", [True, False])
def test_show_memory_and_dataflow(tmp_path, show_memory):
    hook = tfprof.ProfilerHook(save_steps=2, output_dir=str(tmp_path),
                               show_memory=show_memory, show_dataflow=False)
    averages = run(hook, 3, context=True)
    assert list(averages) == [str(tmp_path / "timeline-2.json")]
    # torch recorded memory exactly when asked to.
    usage = [abs(e.cpu_memory_usage) for e in hook.last_profile.key_averages()]
    assert (sum(usage) > 0) == show_memory
    with open(hook.written[0]) as f:
        doc = json.load(f)
    events = doc if isinstance(doc, list) else doc["traceEvents"]
    assert events and not [e for e in events if e.get("ph") in ("s", "t", "f")]
    assert tfprof.load(trace_path=hook.written[0]).step_ids

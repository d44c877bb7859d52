"""tfprof.ProfilerHook: TensorFlow's tf.train.ProfilerHook for a PyTorch
training loop.

    hook = tfprof.ProfilerHook(save_steps=100, output_dir="/tmp/prof")
    for batch in data:
        with hook:              # one training step
            train_step(batch)
    # or: call hook.step() after each training step

Every `save_steps` steps (or `save_secs` seconds; exactly one of them) the
step is recorded with PyTorch's profiler and its Chrome trace written to
<output_dir>/timeline-<step>.json, <step> counting completed steps from 1;
as in TensorFlow the very first step is never traced. When and where come
from the C++ library's ProfilerHook. The recorder is torch.profiler where
PyTorch has Kineto, else the legacy torch.autograd.profiler (Debian's torch
1.13), whose traces `tfprof --trace_path` reads as well. show_memory
records memory (profile_memory); show_dataflow=False drops the trace's flow
events. The legacy profiler's export has neither memory nor flow events:
with it, show_memory only reaches torch's own key_averages()
(last_profile), and show_dataflow changes nothing in the file.
"""

import json
import os

from tfprof import _tfprof


def _kineto_available(torch):
    try:
        return bool(torch.autograd.kineto_available())
    except AttributeError:
        return False


class ProfilerHook(object):
    """Traces every N steps or seconds of a PyTorch training loop into
    timeline-<step>.json files."""

    def __init__(self, save_steps=None, save_secs=None, output_dir="",
                 show_dataflow=True, show_memory=False):
        if output_dir:
            os.makedirs(output_dir, exist_ok=True)
        self._hook = _tfprof.ProfilerHook(save_steps, save_secs, output_dir,
                                          show_dataflow, show_memory)
        self._output_dir = output_dir
        self._show_dataflow = show_dataflow
        self._show_memory = show_memory
        self._global_step = 0  # completed steps
        self._recorder = None
        self._in_step = False
        self.last_profile = None  # the torch profiler of the last trace
        self.written = []  # the timeline files, in order

    # --- a step at a time
    def __enter__(self):
        self._begin()
        return self

    def __exit__(self, exc_type, exc, tb):
        self._end(write=exc_type is None)
        return False

    def step(self):
        """Ends the current training step (call it after each) and starts
        the next. Returns the timeline written for the step, or None."""
        if not self._in_step:
            self._begin()
        path = self._end(write=True)
        self._begin()
        return path

    def close(self):
        """Stops a recording in progress without writing it."""
        if self._in_step:
            self._end(write=False)

    # --- internals
    def _begin(self):
        self._in_step = True
        if self._hook.before_run():
            self._recorder = self._start_recorder()

    def _end(self, write):
        self._in_step = False
        recorder, self._recorder = self._recorder, None
        if recorder is not None:
            recorder.__exit__(None, None, None)
        if not write:
            return None
        path = self._hook.after_run(self._global_step)
        self._global_step += 1
        if not path or recorder is None:
            return None
        self._export(recorder, path)
        self.last_profile = recorder
        self.written.append(path)
        return path

    def _start_recorder(self):
        import torch
        if _kineto_available(torch):
            activities = [torch.profiler.ProfilerActivity.CPU]
            if torch.cuda.is_available():
                activities.append(torch.profiler.ProfilerActivity.CUDA)
            recorder = torch.profiler.profile(
                activities=activities, record_shapes=True,
                profile_memory=self._show_memory)
        else:
            recorder = torch.autograd.profiler.profile(
                record_shapes=True, profile_memory=self._show_memory,
                use_cuda=torch.cuda.is_available())
        recorder.__enter__()
        return recorder

    def _export(self, recorder, path):
        tmp = path + ".tmp"
        recorder.export_chrome_trace(tmp)
        if not self._show_dataflow:
            with open(tmp) as f:
                doc = json.load(f)
            events = doc if isinstance(doc, list) else doc.get(
                "traceEvents", [])
            kept = [e for e in events if e.get("ph") not in ("s", "t", "f")]
            if isinstance(doc, list):
                doc = kept
            else:
                doc["traceEvents"] = kept
            with open(tmp, "w") as f:
                json.dump(doc, f)
        os.replace(tmp, path)

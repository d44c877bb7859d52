"""Shared fixtures of the Python package's tests: the repository's paths
and the tfprof command line, whose output the tests compare with.

Run with Debian's interpreter and the built package on the path:
    PYTHONPATH=build/python /usr/bin/python3 -m pytest python/tests
(scripts/python_package.sh BUILD_DIR --test does, and scripts/test.sh
through it). TFPROF_CLI names the tfprof binary (default build/tfprof).
"""

import json
import os
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CORPUS = os.path.join(ROOT, "testdata", "corpus")
TF_CURRENT = os.path.join(CORPUS, "tf-testdata", "current")
TF_12 = os.path.join(CORPUS, "tf-testdata", "tf-1.2")


def cli_path():
    return os.environ.get("TFPROF_CLI", os.path.join(ROOT, "build", "tfprof"))


class Cli(object):
    """Runs the tfprof command line from the repository root."""

    def run(self, args, check=True):
        proc = subprocess.run([cli_path()] + list(args), cwd=ROOT,
                              capture_output=True, text=True)
        if check and proc.returncode != 0:
            raise AssertionError("tfprof %s failed (%d): %s" %
                                 (" ".join(args), proc.returncode,
                                  proc.stderr))
        return proc

    def json(self, args):
        return json.loads(self.run(args).stdout)

    def error(self, args):
        """The error line the command line prints, without 'tfprof: '."""
        proc = self.run(args, check=False)
        assert proc.returncode != 0, proc.stdout
        lines = [l for l in proc.stderr.splitlines() if l.startswith("tfprof: ")]
        assert lines, proc.stderr
        return lines[-1][len("tfprof: "):], proc.returncode


@pytest.fixture(scope="session")
def cli():
    if not os.path.exists(cli_path()):
        pytest.fail("tfprof binary not found at %s (build it, or set "
                    "TFPROF_CLI)" % cli_path())
    return Cli()


def tf_inputs(directory=TF_CURRENT):
    """The CLI flags of TensorFlow's own tfprof test inputs."""
    return ["--graph_path=" + os.path.join(directory, "graph.pbtxt"),
            "--run_meta_path=" + os.path.join(directory, "run_meta"),
            "--op_log_path=" + os.path.join(directory, "tfprof_log")]


def read(path, mode="rb"):
    with open(path, mode) as f:
        return f.read()

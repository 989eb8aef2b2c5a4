"""The ``jaxbench`` command's process exits without Python's finalisation (``cli.run``): its
exit handlers still run, everything it printed arrives, and its exit code is main()'s."""

import json
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)


def test_handlers_run_output_arrives_and_the_code_is_mains():
    out = _python(
        "import atexit\n"
        "from jaxbench import cli\n"
        "atexit.register(lambda: print('handler ran'))\n"
        # block-buffered into the pipe: lost unless run() flushes before its os._exit
        "cli.main = lambda argv=None: print('x' * 100_000, end='') or 5\n"
        "cli.run()\n"
    )
    assert out.returncode == 5, out.stderr
    assert out.stdout == "x" * 100_000 + "handler ran\n"


def test_the_module_and_the_script_exit_through_run():
    out = subprocess.run(
        [sys.executable, "-m", "jaxbench", "list", "--json"], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0 and len(json.loads(out.stdout)) >= 50, out.stderr
    usage = subprocess.run(
        [sys.executable, "-m", "jaxbench", "evaluate", "--workload", "no-such-workload", "--kernel", "k.py"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert usage.returncode == 2 and "error:" in usage.stderr, usage.stderr

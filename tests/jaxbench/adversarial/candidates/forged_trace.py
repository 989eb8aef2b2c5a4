# expect: correct_slower | rejected
# Writes forged profiler traces claiming 1 ns executions wherever it can write.
import gzip, json, os

from ._honest_rmsnorm import rmsnorm  # inlined on upload: see _honest_rmsnorm.py


_FAKE = {"traceEvents": [{"ph": "X", "name": "jit_workload", "ts": i, "dur": 0.001, "pid": 1, "tid": 1}
                         for i in range(50)]}


def _forge():
    for root in ("/tmp", os.getcwd(), os.path.expanduser("~")):
        for dirpath, _dirs, _files in os.walk(root):
            try:
                with gzip.open(os.path.join(dirpath, "forged.trace.json.gz"), "wt") as f:
                    json.dump(_FAKE, f)
            except OSError:
                pass


_forge()


def workload(x, scale):
    return rmsnorm(x, scale)

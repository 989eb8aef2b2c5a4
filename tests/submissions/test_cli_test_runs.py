"""The client's test-run commands as subprocesses against a live test server: upload, follow the
evaluation to its verdict and preview, list, promote, delete, and clear errors."""

import json
import subprocess
import sys
import time

from evaluator.models import Evaluation
from submissions.models import Submission
from tests import factories
from tests.submissions.conftest import kernel
from tests.submissions.test_cli import ROOT, cli, portal  # noqa: F401  (the live portal fixture)


def wait_for_row(timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = Evaluation.objects.filter(candidate__submission__test_run=True).first()
        if row is not None:
            return row
        time.sleep(0.2)
    raise AssertionError("no test-run evaluation row")


def test_test_run_follows_the_evaluation_and_prints_verdict_and_rank(portal, tmp_path):  # noqa: F811
    f = tmp_path / "my_rmsnorm.py"
    f.write_text(kernel())
    env_cmd = [sys.executable, "-m", "jaxbench.client", "--url", portal.url, "--token", portal.token]
    proc = subprocess.Popen(
        [*env_cmd, "test-run", "12p", str(f), "--hardware", "cpu", "--interval", "0.3", "--timeout", "120"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        row = wait_for_row()
        factories.judge(row.pk, factories.judged_record(outcome="correct_faster", speedup=1.5))
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    run = Submission.test_runs.get()
    assert f"Test run #{run.pk} (test run — private, not on the board)" in err
    assert "12p" in out and "my_rmsnorm.py" in out and "correct_faster" in out and "1.50x [1.35, 1.65]" in out
    assert "Preview, only you see it: would rank #1 of 1" in out
    assert f"test-run-promote {run.pk} --method" in out
    # status, list, JSON
    rc, out, err = portal.run("test-run-status", run.pk)
    assert rc == 0 and "correct_faster" in out and "would rank #1" in out
    rc, out, err = portal.run("--json", "test-runs")
    assert rc == 0 and [r["id"] for r in json.loads(out)] == [run.pk]
    rc, out, err = portal.run("test-runs")
    assert rc == 0 and str(run.pk) in out and "private, not on the board" in out


def test_test_run_no_wait_promote_and_delete(portal, tmp_path, people):  # noqa: F811
    f = tmp_path / "12p_RMSNorm.py"  # one file, named by its workload
    f.write_text(kernel())
    rc, out, err = portal.run("--json", "test-run", f, "--hardware", "cpu", "--no-wait")
    assert rc == 0, err
    body = json.loads(out)
    rid = body["id"]
    assert body["label"] == "test run — private, not on the board" and body["verdicts"][0]["workload"] == "12p"
    # another user's token: as if it did not exist
    rc, out, err = portal.run("test-run-status", rid, token=people.tokens["bob"])
    assert rc == 4 and "not found" in err
    rc, out, err = portal.run("test-run-promote", rid, "--method", "", "--publish")
    assert rc == 1 and "method" in err and "the test run is unchanged" in err
    rc, out, err = portal.run("test-run-promote", rid, "--method", "Hand-written", "--publish")
    assert rc == 0, err
    assert f"Test run #{rid} is now submission #{rid} (published)" in out
    assert Submission.objects.public().filter(pk=rid).exists()
    rc, out, err = portal.run("test-run", "8p", f, "--hardware", "cpu", "--no-wait")
    assert rc == 1 and "named for workload 12p but was given for 8p" in err
    g = tmp_path / "gemm.py"
    g.write_text(kernel("gemm"))
    rc, out, err = portal.run("test-run", "8p", g, "--hardware", "cpu", "--no-wait")
    assert rc == 0, err
    other = Submission.test_runs.get().pk
    rc, out, err = portal.run("test-run-delete", other)
    assert rc == 0 and f"Test run #{other} deleted" in out
    assert not Submission.test_runs.exists()
    rc, out, err = portal.run("test-run-delete", other)
    assert rc == 4


def test_test_run_says_what_is_wrong(portal, tmp_path):  # noqa: F811
    bad = tmp_path / "k.py"
    bad.write_text("def workload(x:\n")
    rc, out, err = portal.run("test-run", "12p", bad, "--hardware", "cpu")
    assert rc == 1 and "k.py" in err and "not valid Python" in err and "nothing was stored" in err
    rc, out, err = portal.run("test-run", "12p", bad, "8p", "--hardware", "cpu")
    assert rc == 2 and "WORKLOAD FILE pairs" in err
    rc, out, err = portal.run("test-run", "12p", tmp_path / "missing.py", "--hardware", "cpu")
    assert rc == 2 and "no such file" in err
    rc, out, err = portal.run("test-run", "12p", bad)
    assert rc == 2 and "--hardware" in err
    assert not Submission.test_runs.exists()
    rc, out, err = cli("test-run", "12p", bad, "--hardware", "cpu", url=portal.url)
    assert rc == 2 and "no API token" in err

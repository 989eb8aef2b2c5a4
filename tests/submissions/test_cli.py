"""The command-line client as a subprocess against a live test server."""

import json
import os
import pathlib
import socket
import subprocess
import sys

import pytest

from evaluator.models import Evaluation
from jaxbench.traces import FORMAT, dumps_lines, example_trace
from submissions.models import Submission
from tests.submissions.conftest import counts, kernel

ROOT = pathlib.Path(__file__).resolve().parents[2]


def cli(*args, url=None, token=None, timeout=120):
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAXBENCH_")}
    cmd = [sys.executable, "-m", "jaxbench.client"]
    if url:
        cmd += ["--url", url]
    if token:
        cmd += ["--token", token]
    out = subprocess.run(
        cmd + [str(a) for a in args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )
    return out.returncode, out.stdout, out.stderr


@pytest.fixture
def portal(transactional_db, live_server, catalog, people):
    class P:
        url = live_server.url
        token = people.tokens["alice"]

        def run(self, *args, token=None, **kw):
            return cli(*args, url=self.url, token=token or self.token, **kw)

    return P()


@pytest.fixture
def kernel_dir(tmp_path):
    d = tmp_path / "outputs"
    (d / "12p_RMSNorm").mkdir(parents=True)
    (d / "12p_RMSNorm" / "optimized.py").write_text(kernel())
    (d / "12p_RMSNorm" / "baseline.py").write_text("not a candidate")
    (d / "8p.py").write_text(kernel("gemm"))
    (d / "notes.md").write_text("# run notes")
    (d / "__pycache__").mkdir()
    (d / "__pycache__" / "x.py").write_text("junk(")
    return d


def test_submit_kernels_directory_and_retry(portal, kernel_dir):
    rc, out, err = portal.run(
        "submit-kernels", kernel_dir, "--hardware", "cpu", "--method", "Autocomp", "--model", "Gemini 3 Flash"
    )
    assert rc == 0, err
    sub = Submission.objects.get()
    assert f"Created submission #{sub.pk}" in out and "2 candidates" in out and "private to team-a" in out
    assert sorted(sub.candidates.values_list("workload__wid", flat=True)) == ["12p", "8p"]
    assert sub.method == "Autocomp" and sub.model_name == "Gemini 3 Flash" and sub.upload_key.startswith("sha256:")
    for f in kernel_dir.rglob("*.py"):  # a retry later: timestamps do not change the default key
        os.utime(f, (1_700_000_000, 1_700_000_000))
    rc, out, err = portal.run(
        "submit-kernels", kernel_dir, "--hardware", "cpu", "--method", "Autocomp", "--model", "Gemini 3 Flash"
    )
    assert rc == 0 and f"Already uploaded (same upload key) as submission #{sub.pk}" in out
    assert counts() == (1, 2, 2)


def test_submit_kernels_single_files_and_a_zip(portal, tmp_path, kernel_dir):
    import zipfile

    f = tmp_path / "13p_Cross_Entropy.py"
    f.write_text(kernel())
    rc, out, err = portal.run(
        "--json",
        "submit-kernels",
        f,
        kernel_dir / "8p.py",
        "--hardware",
        "tpu-v6e",
        "--method",
        "M",
        "--upload-key",
        "",
    )
    assert rc == 0, err
    sub = Submission.objects.get(pk=json.loads(out)["id"])
    assert sorted(sub.candidates.values_list("workload__wid", flat=True)) == ["13p", "8p"] and sub.upload_key is None
    z = tmp_path / "k.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("run/12p_RMSNorm/kernel.py", kernel())
    rc, out, err = portal.run("--json", "submit-kernels", z, "--hardware", "cpu", "--method", "M")
    assert rc == 0, err
    assert Submission.objects.get(pk=json.loads(out)["id"]).candidates.get().workload.wid == "12p"


def test_submit_kernels_rejected_with_per_file_errors(portal, tmp_path):
    (tmp_path / "12p.py").write_text("def workload(x:\n")
    (tmp_path / "77k.py").write_text(kernel())
    rc, out, err = portal.run("submit-kernels", tmp_path, "--hardware", "cpu", "--method", "M")
    assert rc == 1
    assert "kernels.zip: 12p.py, field 'syntax': not valid Python" in err
    assert "kernels.zip: 77k.py, field 'name'" in err and "nothing was stored" in err
    assert counts() == (0, 0, 0)


def test_submit_trace_then_retry_then_json(portal, tmp_path):
    f = tmp_path / "run.jsonl"
    f.write_text(dumps_lines(example_trace()))
    rc, out, err = portal.run("submit-trace", f)
    assert rc == 0, err
    assert "valid jaxbench-trace/1: 3 samples over 2 workloads" in err and "checked against" in err
    sub = Submission.objects.get()
    assert sub.kind == "trace" and sub.candidates.count() == 3 and sub.upload_key.startswith("sha256:")
    rc, out, err = portal.run("--json", "submit-trace", f)
    assert rc == 0 and json.loads(out)["id"] == sub.pk and json.loads(out)["created"] is False
    assert counts() == (1, 3, 3)


def test_the_header_upload_key_is_the_cli_default(portal, tmp_path):
    objs = example_trace()
    objs[0]["upload_key"] = "agent-run-7"
    f = tmp_path / "keyed.jsonl"
    f.write_text(dumps_lines(objs))
    for _ in range(2):
        rc, out, err = portal.run("--json", "submit-trace", f)
        assert rc == 0, err
    assert Submission.objects.get().upload_key == "agent-run-7"
    rc, out, err = portal.run("submit-trace", f, "--upload-key", "other")
    assert rc == 1 and "differs" in err


def test_submit_trace_invalid_is_not_uploaded(portal, tmp_path):
    f = tmp_path / "bad.jsonl"
    lines = example_trace()
    lines[2]["index"] = 5
    f.write_text(dumps_lines(lines))
    rc, out, err = portal.run("submit-trace", f)
    assert rc == 1 and "line 3, field 'index'" in err and "missing 1" in err
    rc, out, err = portal.run("submit-trace", f, "--no-validate")  # the server says the same
    assert rc == 1 and "line 3, field 'index'" in err and "nothing was stored" in err
    assert counts() == (0, 0, 0)


FIXTURES = pathlib.Path(__file__).parents[1] / "jaxbench" / "traces" / "fixtures"


def test_submit_trace_takes_atif_as_agents_write_it(portal, tmp_path):
    """An ATIF trajectory goes through the CLI as it is: checked with the portal's rules, sent as
    one JSON document with the options it lacks, each kernel it wrote a candidate."""
    atif = FIXTURES / "atif_two_workloads.json"
    rc, out, err = cli("validate-trace", atif)
    assert rc == 0, err
    assert "valid ATIF-v1.4 trajectory: 3 samples over 2 workloads" in out
    rc, out, err = portal.run("--json", "submit-trace", atif, "--method", "Kernel agent (CLI)")
    assert rc == 0, err
    sub = Submission.objects.get(pk=json.loads(out)["id"])
    assert sub.kind == "trace" and sub.method == "Kernel agent (CLI)" and sub.candidates.count() == 3
    assert sub.upload_key.startswith("sha256:")
    # the same file again is the same upload; --no-validate sends it as a document too
    rc, out, err = portal.run("--json", "submit-trace", atif, "--no-validate", "--method", "Kernel agent (CLI)")
    assert rc == 0 and json.loads(out)["id"] == sub.pk, err


def test_trajectory_options_are_refused_for_a_jsonl_trace(portal, tmp_path):
    f = tmp_path / "run.jsonl"
    f.write_text(dumps_lines(example_trace()))
    rc, out, err = cli("validate-trace", f, "--hardware", "cpu")
    assert rc == 2 and "--hardware: for ATIF and ADK trajectories" in err


def test_an_invalid_atif_trajectory_names_its_json_path(portal, tmp_path):
    doc = json.loads((FIXTURES / "atif_two_workloads.json").read_text())
    doc["steps"][2]["timestamp"] = "yesterday"
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(doc, indent=1))
    rc, out, err = portal.run("submit-trace", f)
    assert rc == 1 and "invalid ATIF/ADK trajectory" in err and "steps[2].timestamp" in err
    assert counts() == (0, 0, 0)


def test_validate_trace_offline_and_against_the_portal(portal, tmp_path):
    f = tmp_path / "t.jsonl"
    objs = example_trace()
    objs[3]["workload"] = "8p_NotGEMM"
    f.write_text(dumps_lines(objs))
    rc, out, err = cli("validate-trace", f)  # offline: only the ID is checked
    assert rc == 0 and "valid jaxbench-trace/1" in out and "offline" in out
    rc, out, err = cli("validate-trace", f, url=portal.url)  # the portal's names
    assert rc == 1 and "line 4, field 'workload': unknown workload '8p_NotGEMM'" in err
    f.write_text(json.dumps({"format": "jaxbench-trace/7"}) + "\n")
    rc, out, err = cli("validate-trace", f)
    assert rc == 1 and "line 1, field 'format': unsupported format version" in err
    rc, out, err = cli("validate-trace", tmp_path / "missing.jsonl")
    assert rc == 2 and "no such file" in err


def test_status_wait_progress_then_summary(portal, kernel_dir):
    rc, out, _ = portal.run("--json", "submit-kernels", kernel_dir, "--hardware", "cpu", "--method", "M")
    sid = json.loads(out)["id"]
    rc, out, err = portal.run("status", sid, "--wait", "--timeout", "1", "--interval", "0.3")
    assert rc == 6 and "timed out" in err and "0/2 evaluated" in err
    evs = Evaluation.objects.filter(candidate__submission_id=sid)
    evs.filter(candidate__workload__wid="12p").update(
        state="done", outcome="correct_faster", speedup=1.75, speedup_lo=1.61, speedup_hi=1.83
    )
    evs.filter(candidate__workload__wid="8p").update(state="done", outcome="compile_error")
    rc, out, err = portal.run("status", sid, "--wait", "--interval", "0.3")
    assert rc == 0, err
    assert f"Submission #{sid}: 2/2 evaluated (finished)" in out
    row12 = next(line for line in out.splitlines() if line.startswith("12p"))
    # workload, samples, evaluated, correct, faster, ties, best speedup with its interval, first
    assert row12.split() == ["12p", "1", "1", "1", "1", "0", "1.75x", "[1.61,", "1.83]", "0"]
    assert "1/2 workloads solved, 1 faster than XLA." in out
    rc, out, err = portal.run("--json", "status", sid)
    assert rc == 0 and json.loads(out)["status"]["finished"] is True


def test_whoami_publish_withdraw(portal, kernel_dir):
    rc, out, err = portal.run("whoami")
    assert rc == 0 and "alice" in out and "team-a (owner)" in out
    rc, out, _ = portal.run("--json", "submit-kernels", kernel_dir, "--hardware", "cpu", "--method", "M", "--publish")
    sid = json.loads(out)["id"]
    assert Submission.objects.get(pk=sid).is_public
    rc, out, err = portal.run("withdraw", sid)
    assert rc == 0 and "Withdrew submission" in out and not Submission.objects.get(pk=sid).is_public


def test_errors_and_exit_codes(portal, people, kernel_dir):
    rc, _, err = cli("status", "1", url=portal.url, token="jxb_nonsense")
    assert rc == 3 and "not authenticated" in err
    rc, _, err = cli("submit-trace", "x.jsonl", url=portal.url)
    assert rc == 2 and "no API token" in err and "JAXBENCH_TOKEN" in err
    rc, _, err = cli("whoami", token="t")
    assert rc == 2 and "JAXBENCH_URL" in err
    rc, _, err = portal.run("status", "999999")
    assert rc == 4 and "not found" in err
    rc, _, err = portal.run("publish", "1", token=people.tokens["bob"])
    assert rc == 4
    rc, _, err = portal.run("submit-kernels", kernel_dir, "--method", "M")
    assert rc == 2 and "--hardware" in err
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rc, _, err = cli("--retries", "0", "workloads", url=f"http://127.0.0.1:{port}")
    assert rc == 5 and "cannot reach the portal" in err
    rc, _, err = cli("bogus-command")
    assert rc == 2


def test_workloads_and_leaderboard(portal):
    rc, out, err = portal.run("workloads")
    assert rc == 0 and "12p_RMSNorm" in out and "18k" in out
    rc, out, err = portal.run("leaderboard", "--hardware", "cpu", "--set", "expert")
    # /api/v1/leaderboard/ belongs to the leaderboard module; without it the client says it is missing
    assert (rc == 0 and "budget N" in out) or (rc == 4 and "no leaderboard API" in err), (rc, out, err)
    rc, out, err = portal.run("--json", "leaderboard", "--hardware", "cpu")
    assert rc != 0 or isinstance(json.loads(out), dict)


def test_the_client_env_configuration(portal):
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAXBENCH_")}
    env.update(JAXBENCH_URL=portal.url, JAXBENCH_TOKEN=portal.token)
    out = subprocess.run(
        [sys.executable, "-m", "jaxbench.client", "whoami"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0 and "alice" in out.stdout


def test_trace_header_line_is_documented_in_help():
    rc, out, _ = cli("--help")
    assert rc == 0 and "submit-kernels" in out and "exit codes" in out and FORMAT not in out.split("COMMAND")[0]


def test_summary_counts_ties_apart_and_prints_intervals(capsys):
    """per_workload and print_summary on evaluations as the API returns them: a tie is correct,
    never faster; the best sample's interval is printed; a row timed before intervals shows its
    point alone."""
    import types

    from jaxbench.client import commands

    def ev(wid, index, outcome, speedup=None, lo=None, hi=None):
        return {
            "workload": wid,
            "index": index,
            "stage": "main",
            "state": "done",
            "outcome": outcome,
            "speedup": speedup,
            "speedup_lo": lo,
            "speedup_hi": hi,
        }

    evaluations = [
        ev("12p", 0, "correct_tie", 1.04, 0.97, 1.12),
        ev("12p", 1, "incorrect"),
        ev("8p", 0, "correct_faster", 1.3, 1.21, 1.38),
        ev("8p", 1, "correct_tie", 1.5, 0.9, 2.1),
        ev("3p", 0, "correct_faster", 1.2),
    ]  # timed before intervals
    rows = {r["workload"]: r for r in commands.per_workload(evaluations)}
    assert (rows["12p"]["correct"], rows["12p"]["faster"], rows["12p"]["ties"]) == (1, 0, 1)
    assert (rows["8p"]["faster"], rows["8p"]["ties"], rows["8p"]["best"]) == (1, 1, 1.5)
    portal = types.SimpleNamespace(get_all=lambda path, page_size=None: evaluations)
    args = types.SimpleNamespace(json=False)
    st = {"done": 5, "total": 5, "finished": True, "outcomes": {"correct_tie": 2, "correct_faster": 2, "incorrect": 1}}
    assert commands.print_summary(args, portal, 7, st) == commands.EXIT_OK
    out = capsys.readouterr().out
    assert "1.04x [0.97, 1.12]" in out and "1.50x [0.90, 2.10]" in out
    row3 = next(line for line in out.splitlines() if line.startswith("3p"))
    assert row3.split() == ["3p", "1", "1", "1", "1", "0", "1.20x", "0"]
    assert "3/3 workloads solved, 2 faster than XLA, 1 within noise of XLA" in out


def test_status_says_why_each_sample_failed(capsys):
    """status prints each failed sample's first message line and its candidate line; --json
    carries the whole message. The wrong-signature kernel's TypeError is the example."""
    import types

    from jaxbench.client import commands
    from jaxbench.verdict.rules import classify_child_error

    outcome, category, message = classify_child_error(
        {
            "type": "error",
            "stage": "trace",
            "exc_type": "TypeError",
            "message": "TypeError: workload() takes 1 positional argument but 2 were given\n",
            "where": ["candidate.py:9 in run: return workload(x, weight)"],
        },
        "compile",
    )
    long = "max |cand - exact| = 3.2 beyond the allowance\nsecond line\nthird line"
    base = {"stage": "main", "state": "done", "speedup": None, "speedup_lo": None, "speedup_hi": None}
    evaluations = [
        {**base, "workload": "12p", "index": 0, "outcome": outcome, "message": message},
        {**base, "workload": "12p", "index": 1, "outcome": "correct_faster", "speedup": 1.3, "message": ""},
        {**base, "workload": "8p", "index": 0, "outcome": "incorrect", "message": long},
        {**base, "workload": "8p", "index": 1, "outcome": "", "message": "", "state": "queued"},
    ]
    evaluations[0]["record"] = {"error_category": category}
    portal = types.SimpleNamespace(get_all=lambda path, page_size=None: evaluations)
    st = {"done": 3, "total": 4, "finished": False, "outcomes": {"compile_error": 1}}
    assert commands.print_summary(types.SimpleNamespace(json=False), portal, 7, st) == commands.EXIT_OK
    out = capsys.readouterr().out
    why = out.split("Why samples failed (2):")[1].splitlines()
    assert why[1:4] == [  # in workload order
        "  8p #0 incorrect: max |cand - exact| = 3.2 beyond the allowance",
        "  12p #0 compile_error (trace_error): TypeError: workload() takes 1 positional argument but 2 were given",
        "      at candidate.py:9 in run: return workload(x, weight)",
    ]
    assert "second line" not in out
    assert commands.print_summary(types.SimpleNamespace(json=True), portal, 7, st) == commands.EXIT_OK
    failed = json.loads(capsys.readouterr().out)["failures"]
    assert [(f["workload"], f["index"], f["outcome"]) for f in failed] == [("8p", 0, "incorrect"), ("12p", 0, outcome)]
    assert failed[0]["message"] == long
    assert failed[1]["where"] == ["candidate.py:9 in run: return workload(x, weight)"]


def test_status_wait_without_a_terminal_prints_progress_lines(capsys, monkeypatch):
    """tqdm draws nothing when stderr is not a terminal: a line on each change and every
    PROGRESS_EVERY_S seconds in between, so a log shows the wait is alive."""
    import types

    from jaxbench.client import commands

    clock = {"t": 0.0}
    monkeypatch.setattr(commands.time, "monotonic", lambda: clock["t"])
    monkeypatch.setattr(commands.time, "sleep", lambda s: clock.__setitem__("t", clock["t"] + s))
    # polled every 10 s: 0/2 for 70 s, then 1/2, then finished
    states = [(0, {})] * 8 + [(1, {"correct_faster": 1})] * 2 + [(2, {"correct_faster": 2})]
    polls = iter(states)

    def get(path):
        done, outcomes = next(polls)
        return {"done": done, "total": 2, "finished": done == 2, "outcomes": outcomes}

    portal = types.SimpleNamespace(get=get, get_all=lambda path, page_size=None: [])
    monkeypatch.setattr(commands, "print_summary", lambda args, portal, sid, st: commands.EXIT_OK)
    args = types.SimpleNamespace(timeout=None, interval=10.0, json=False)
    assert commands.wait_and_summarise(args, portal, 7) == commands.EXIT_OK
    lines = [ln.split(" ", 1)[1] for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert lines == [
        "#7: 0/2 evaluated; none yet",  # t=0
        "#7: 0/2 evaluated; none yet",  # t=30
        "#7: 0/2 evaluated; none yet",  # t=60
        "#7: 1/2 evaluated; correct_faster 1",  # t=80, a change
        "#7: 2/2 evaluated; correct_faster 2",  # t=100
    ]

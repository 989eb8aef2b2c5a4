"""The one intake path: validation of kernel files, archives and traces; one transaction;
idempotent upload keys; nothing half-stored."""

import io
import json
import zipfile

import pytest

from evaluator.models import Evaluation
from jaxbench.traces import FORMAT
from leaderboard.aggregates.refresh import rebuild_reported
from leaderboard.models import WorkloadResult
from submissions import intake
from submissions.intake import IntakeError, Upload
from submissions.models import Candidate, Submission
from tests.submissions.conftest import counts, kernel, make_zip

META = {"method": "Hand-written", "model_name": "Human", "description": "d", "link": "https://example.org"}
pytestmark = pytest.mark.django_db


def submit(people, files, meta=None, hardware="cpu"):
    return intake.create_kernel_submission(people.team_a, people.alice, hardware, dict(meta or META), files)


def rejected(people, files, meta=None, hardware="cpu") -> list[dict]:
    before = counts()
    with pytest.raises(IntakeError) as info:
        submit(people, files, meta, hardware)
    assert counts() == before, "nothing may be stored after a rejection"
    return info.value.errors


def has(errors, field, needle, file=None):
    return any(
        e.get("field") == field and needle in e["message"] and (file is None or e.get("file") == file) for e in errors
    )


def test_kernel_files_create_submission_candidates_and_evaluations(catalog, people, no_broker):
    sub = submit(
        people,
        [
            ("12p.py", kernel().encode()),
            ("8p_GEMM.py", kernel("g")),
            Upload("whatever.py", io.BytesIO(kernel("r").encode()), workload="18k"),
        ],
    )
    assert sub.kind == Submission.KERNELS and sub.team == people.team_a and sub.created_by == people.alice
    assert sub.method == "Hand-written" and sub.model_name == "Human" and not sub.is_public
    cands = list(sub.candidates.order_by("workload__number"))
    assert [(c.workload.wid, c.index, c.filename) for c in cands] == [
        ("8p", 0, "8p_GEMM.py"),
        ("12p", 0, "12p.py"),
        ("18k", 0, "whatever.py"),
    ]
    assert all(len(c.code_sha256) == 64 for c in cands)
    evs = Evaluation.objects.filter(candidate__submission=sub)
    assert evs.count() == 3 and set(evs.values_list("state", "stage")) == {("queued", "main")}
    assert no_broker == []  # enqueued only after the commit (the test transaction never commits)


def test_accelerator_targets_start_with_the_precheck(catalog, people):
    sub = submit(people, [("12p.py", kernel())], hardware="tpu-v6e")
    assert list(Evaluation.objects.filter(candidate__submission=sub).values_list("stage", flat=True)) == ["precheck"]


@pytest.mark.parametrize(
    "members, expected",
    [
        ({"12p.py": kernel(), "8p-gemm.py": kernel()}, {"12p", "8p"}),
        (
            {
                "12p_RMSNorm/optimized.py": kernel(),
                "12p_RMSNorm/baseline.py": "x = (",
                "8p_GEMM/kernel.py": kernel(),
                "8p_GEMM/results.json": "{}",
                "README.md": "# notes",
                ".DS_Store": "\x00",
                "__MACOSX/12p_RMSNorm/._optimized.py": "\x00\x01",
            },
            {"12p", "8p"},
        ),
        (
            {
                "autocomp-run/outputs/13p_Cross_Entropy/kernel.py": kernel(),
                "autocomp-run/outputs/1p.py": kernel(),
                "autocomp-run/": "",
            },
            {"13p", "1p"},
        ),
        ({"./12p.py": kernel()}, {"12p"}),
    ],
)
def test_zip_layouts(catalog, people, members, expected):
    sub = submit(people, [("outputs.zip", make_zip(members))])
    assert set(sub.candidates.values_list("workload__wid", flat=True)) == expected


@pytest.mark.parametrize(
    "files, field, needle",
    [
        ([("12p.py", b"def workload(x):\n    return x\xff\n")], "encoding", "not UTF-8"),
        ([("12p.py", "def workload(x:\n    return x\n")], "syntax", "not valid Python: line 1"),
        (
            [("12p.py", "def helper(x):\n    return x\n\nclass K:\n    def workload(self): pass\n")],
            "workload",
            "no module-level `workload`",
        ),
        ([("99p.py", kernel())], "name", "unknown workload '99p': use an ID such as 12p"),
        # a bare key (the API's "kernels" object): the workload is unknown, and how to list them
        ([("99p", kernel())], "name", "unknown workload '99p'"),
        ([("99p", kernel())], "name", "listed at /workloads/ and by `python -m jaxbench.client workloads`"),
        ([("12p_Wrong.py", kernel())], "name", "unknown workload '12p_Wrong'"),
        ([("notes.txt", kernel())], "name", "must be a .py file"),
        ([("12p.py", b"x" * (intake.MAX_KERNEL_BYTES + 1))], "size", "larger than 256 KB"),
        ([("12p.py", "")], "code", "empty"),
        ([("12p.py", "x = '\x00'\ndef workload(): pass\n")], "syntax", "NUL"),
        ([("12p.py", kernel()), ("12p_RMSNorm.py", kernel("again"))], "name", "workload 12p given twice"),
        ([Upload("13p.py", kernel(), workload="12p")], "name", "named for workload 13p but was given for 12p"),
        ([], "files", "no kernel files"),
    ],
)
def test_bad_files_reject_the_whole_submission(catalog, people, files, field, needle):
    errors = rejected(people, [("8p.py", kernel())] + files if files else files)
    assert has(errors, field, needle), errors


def test_errors_name_each_file_and_all_are_reported(catalog, people):
    errors = rejected(people, [("12p.py", "def workload(:"), ("8p.py", "x = 1\n"), ("1p.py", kernel())])
    assert {(e["file"], e["field"]) for e in errors} == {("12p.py", "syntax"), ("8p.py", "workload")}


@pytest.mark.parametrize(
    "members, field, needle",
    [
        ({"../evil.py": kernel()}, "path", "climbs out"),
        ({"12p/../../etc/12p.py": kernel()}, "path", "climbs out"),
        ({"/abs/12p.py": kernel()}, "path", "absolute"),
        ({"C:/x/12p.py": kernel()}, "path", "absolute"),
        ({"12p_RMSNorm\\kernel.py": kernel()}, "path", "backslashes"),
        ({"a/b/c/d/e/f/12p.py": kernel()}, "path", "nested more than"),
        ({"12p_RMSNorm/kernel.py": "def workload(:\n"}, "syntax", "not valid Python"),
        ({"12p_RMSNorm/kernel.py": b"\xff\xfe"}, "encoding", "not UTF-8"),
        ({"helpers/util.py": kernel()}, "name", "cannot tell the workload"),
        ({"12p_RMSNorm/a.py": kernel(), "12p_RMSNorm/b.py": kernel()}, "name", "given twice"),
        ({"12p.py": b"x" * (intake.MAX_KERNEL_BYTES + 10)}, "size", "larger than"),
        ({"README.md": "nothing here"}, "archive", "no kernel .py files"),
    ],
)
def test_bad_archives(catalog, people, members, field, needle):
    errors = rejected(people, [Upload("up.zip", make_zip(members), input="zip", archive=True)])
    assert has(errors, field, needle), errors
    assert all(e.get("input") == "zip" for e in errors)
    assert all(e["file"].startswith("up.zip") for e in errors)


def test_not_a_zip_and_zip_bombs(catalog, people):
    assert has(rejected(people, [("k.zip", b"PK\x03\x04 not really")]), "archive", "not a readable .zip")
    bomb = make_zip({"12p.py": "#" * (50 * 1024 * 1024)})  # 50 MB of comment, ~50 KB zipped
    assert len(bomb) < 1024 * 1024
    assert has(rejected(people, [("bomb.zip", bomb)]), "size", "larger than 256 KB")


def test_zip_member_sizes_are_not_trusted(catalog, people, monkeypatch):
    """A member whose header understates its size is still cut at the cap."""
    data = make_zip({"12p.py": "#" * (intake.MAX_KERNEL_BYTES * 2)})
    real = zipfile.ZipFile.infolist

    def lying(self):
        infos = real(self)
        for i in infos:
            i.file_size = 10
        return infos

    monkeypatch.setattr(zipfile.ZipFile, "infolist", lying)
    errors = rejected(people, [("lie.zip", data)])
    assert has(errors, "size", "larger than") or has(errors, "archive", "cannot be extracted"), errors


def test_meta_hardware_and_team_are_checked(catalog, people):
    assert has(rejected(people, [("12p.py", kernel())], meta={**META, "method": " "}), "method", "name the method")
    assert has(rejected(people, [("12p.py", kernel())], meta={**META, "link": "javascript:x"}), "link", "http")
    assert has(rejected(people, [("12p.py", kernel())], hardware="tpu-v99"), "hardware", "unknown hardware")
    assert has(rejected(people, [("12p.py", kernel())], meta={**META, "upload_key": "bad key"}), "upload_key", "1-128")
    with pytest.raises(IntakeError, match="not a member"):
        intake.create_kernel_submission(people.team_a, people.bob, "cpu", META, [("12p.py", kernel())])
    with pytest.raises(IntakeError, match="in no team"):
        intake.resolve_team(people.loner)
    assert intake.resolve_team(people.alice) == people.team_a
    with pytest.raises(IntakeError, match="not a member of a team 'team-b'"):
        intake.resolve_team(people.alice, "team-b")


def test_upload_key_makes_retries_idempotent(catalog, people):
    meta = {**META, "upload_key": "run-1"}
    first = submit(people, [("12p.py", kernel())], meta)
    assert first.was_duplicate is False
    again = submit(people, [("12p.py", kernel()), ("8p.py", kernel())], meta)
    assert again.pk == first.pk and again.was_duplicate is True
    assert counts() == (1, 1, 1)
    # the key is per team: another team may use it
    other = intake.create_kernel_submission(people.team_b, people.bob, "cpu", meta, [("12p.py", kernel())])
    assert other.pk != first.pk


def test_a_concurrent_duplicate_returns_the_winner(catalog, people, monkeypatch):
    """The existence check passed, then another request stored the same key first: the
    unique constraint decides and the loser returns the winner's submission."""
    winner = submit(people, [("12p.py", kernel())], {**META, "upload_key": "race"})
    monkeypatch.setattr(
        intake.service,
        "existing_upload",
        lambda team, key, _real=intake.existing_upload: (
            None
            if monkeypatch_state.setdefault("calls", 0) == 0 and not monkeypatch_state.update(calls=1)
            else _real(team, key)
        ),
    )
    monkeypatch_state.clear()
    loser = submit(people, [("8p.py", kernel())], {**META, "upload_key": "race"})
    assert loser.pk == winner.pk and loser.was_duplicate
    assert counts() == (1, 1, 1)


monkeypatch_state: dict = {}


# -- traces -----------------------------------------------------------------------------------

HEADER = {
    "format": FORMAT,
    "method": "Best-of-N",
    "model": "Gemini 3 Flash",
    "framework": "agent 1",
    "hardware": "cpu",
    "sampling": "independent",
    "budget": 3,
    "settings": {"temperature": 1.0},
}


def trace_bytes(*objs) -> bytes:
    return "".join(json.dumps(o) + "\n" for o in objs).encode()


def s(w, i, **kw):
    return {"workload": w, "index": i, "code": kernel(f"{w}-{i}"), **kw}


def test_trace_submission_keeps_order_and_fields(catalog, people):
    data = trace_bytes(
        HEADER,
        s(
            "12p",
            1,
            parent=0,
            round=1,
            outcome="correct_faster",
            speedup=1.3,
            tokens_in=10,
            tokens_out=20,
            cost_usd=0.5,
        ),
        s("8p_GEMM", 0, outcome="api_error"),
        s("12p-rmsnorm", 0),
        s("12p", 2),
    )
    sub = intake.create_trace_submission(people.team_a, people.alice, io.BytesIO(data))
    assert (sub.kind, sub.method, sub.model_name, sub.framework, sub.sampling, sub.budget) == (
        "trace",
        "Best-of-N",
        "Gemini 3 Flash",
        "agent 1",
        "independent",
        3,
    )
    assert sub.trace_settings == {"temperature": 1.0} and sub.hardware.slug == "cpu"
    rows = list(
        Candidate.objects.filter(submission=sub)
        .order_by("workload__number", "index")
        .values_list(
            "workload__wid",
            "index",
            "parent_index",
            "round",
            "reported_outcome",
            "reported_speedup",
            "tokens_in",
            "tokens_out",
            "cost_usd",
        )
    )
    assert rows == [
        ("8p", 0, None, None, "api_error", None, None, None, None),
        ("12p", 0, None, None, "", None, None, None, None),
        ("12p", 1, 0, 1, "correct_faster", 1.3, 10, 20, 0.5),
        ("12p", 2, None, None, "", None, None, None, None),
    ]
    c = Candidate.objects.get(submission=sub, workload__wid="12p", index=2)
    assert c.code == kernel("12p-2") and c.code_sha256 == __import__("hashlib").sha256(c.code.encode()).hexdigest()
    assert Evaluation.objects.filter(candidate__submission=sub).count() == 4


@pytest.mark.parametrize(
    "data, line, field, needle",
    [
        (b'{"format": "jaxbench-trace/1"\n', 1, None, "not valid JSON"),
        (trace_bytes({**HEADER, "format": "jaxbench-trace/9"}, s("12p", 0)), 1, "format", "unsupported format version"),
        (trace_bytes({k: v for k, v in HEADER.items() if k != "method"}, s("12p", 0)), 1, "method", "missing"),
        (
            trace_bytes({**HEADER, "hardware": "tpu-v99"}, s("12p", 0)),
            1,
            "hardware",
            "unknown hardware target 'tpu-v99'",
        ),
        (trace_bytes(HEADER, s("12p", 0), {"workload": "8p", "code": ""}), 3, "index", "missing"),
        (trace_bytes(HEADER, s("12p", 0), s("12p", 2)), 3, "index", "without gaps"),
        (trace_bytes(HEADER, s("12p", 0), s("12p", 0)), 3, "index", "duplicate index 0"),
        (trace_bytes(HEADER, s("12p", 0), s("50k", 0)), 3, "workload", "unknown workload '50k'"),
        (trace_bytes(HEADER, *[s("12p", i) for i in range(4)]), 5, "index", "budget of 3"),
    ],
)
def test_bad_traces_store_nothing(catalog, people, data, line, field, needle):
    before = counts()
    with pytest.raises(IntakeError) as info:
        intake.create_trace_submission(people.team_a, people.alice, io.BytesIO(data))
    assert counts() == before
    assert any(e["line"] == line and e["field"] == field and needle in e["message"] for e in info.value.errors), (
        info.value.errors
    )


def test_trace_upload_key_from_argument_or_header(catalog, people):
    data = trace_bytes({**HEADER, "upload_key": "h-1"}, s("12p", 0))
    first = intake.create_trace_submission(people.team_a, people.alice, io.BytesIO(data))
    assert first.upload_key == "h-1"
    again = intake.create_trace_submission(people.team_a, people.alice, io.BytesIO(data))
    assert again.pk == first.pk and again.was_duplicate
    # a retry with the key as an argument is answered before the body is read
    boom = io.BytesIO(b"")
    boom.readline = lambda *a: (_ for _ in ()).throw(AssertionError("read"))
    assert intake.create_trace_submission(people.team_a, people.alice, boom, upload_key="h-1").pk == first.pk
    with pytest.raises(IntakeError, match="differs"):
        intake.create_trace_submission(people.team_a, people.alice, io.BytesIO(data), upload_key="other")
    for bad in ("bad key", "-x", "k" * 129, 7):
        with pytest.raises(IntakeError, match="1-128 characters") as caught:
            intake.create_trace_submission(people.team_a, people.alice, io.BytesIO(data), upload_key=bad)
        assert caught.value.errors[0]["field"] == "upload_key"
    assert counts() == (1, 1, 1)


def test_a_failure_inside_the_transaction_rolls_everything_back(catalog, people, monkeypatch):
    def explode(submission, **kwargs):
        raise RuntimeError("scheduler down")

    monkeypatch.setattr("evaluator.receivers.schedule_submission", explode)  # what the intake signal runs
    with pytest.raises(RuntimeError):
        submit(people, [("12p.py", kernel()), ("8p.py", kernel())])
    assert counts() == (0, 0, 0)


def test_a_trace_is_stored_whole_or_not_at_all(catalog, people, monkeypatch):
    """The trace's samples go in by COPY / executemany (submissions.bulk), still inside the one
    transaction: a failure after they are written leaves nothing behind."""

    def explode(submission, **kwargs):
        assert Candidate.objects.filter(submission=submission).count() == 3  # written, not committed
        raise RuntimeError("scheduler down")

    monkeypatch.setattr("evaluator.receivers.schedule_submission", explode)  # what the intake signal runs
    data = trace_bytes(HEADER, s("12p", 0), s("12p", 1), s("8p", 0))
    with pytest.raises(RuntimeError):
        intake.create_trace_submission(people.team_a, people.alice, io.BytesIO(data))
    assert counts() == (0, 0, 0)


def test_trace_reported_intervals_are_stored_shown_and_folded(catalog, people, client):
    """A self-reported interval is stored with its sample, shown on the trace page and in the
    API, and the self-reported summary trusts it as the portal trusts its own: a 'faster' whose
    interval holds 1.0 is a tie; a sample without an interval keeps the point rule."""
    data = trace_bytes(
        HEADER,
        s("12p", 0, outcome="correct_faster", speedup=1.2, speedup_lo=0.95, speedup_hi=1.3),
        s("12p", 1, outcome="correct_faster", speedup=1.5, speedup_lo=1.4, speedup_hi=1.6),
        s("8p", 0, outcome="correct_faster", speedup=1.1),
    )
    sub = intake.create_trace_submission(people.team_a, people.alice, io.BytesIO(data))
    rows = list(
        Candidate.objects.filter(submission=sub)
        .order_by("workload__number", "index")
        .values_list("workload__wid", "index", "reported_speedup", "reported_speedup_lo", "reported_speedup_hi")
    )
    assert rows == [("8p", 0, 1.1, None, None), ("12p", 0, 1.2, 0.95, 1.3), ("12p", 1, 1.5, 1.4, 1.6)]
    summary = rebuild_reported(sub)
    assert (summary.counts["correct_tie"], summary.counts["correct_faster"]) == (1, 2)
    r12 = WorkloadResult.objects.get(summary=summary, workload__wid="12p")
    r8 = WorkloadResult.objects.get(summary=summary, workload__wid="8p")
    assert (r12.n_tie, r12.n_faster, r12.best_speedup, r12.best_low, r12.best_high) == (1, 1, 1.5, 1.4, 1.6)
    assert not r12.best_before_intervals and r8.best_before_intervals

    client.force_login(people.alice)
    html = client.get(f"/submissions/{sub.pk}/?workload=12p").content.decode()
    assert "correct_faster 1.20x [0.95, 1.30]" in html and "correct_faster 1.50x [1.40, 1.60]" in html
    ev = client.get(f"/api/v1/submissions/{sub.pk}/evaluations/").json()
    ev = ev["results"] if isinstance(ev, dict) else ev
    claims = {(e["workload"], e["index"]): e["claimed_by_agent"] or {} for e in ev}
    got = {k: (c.get("speedup_lo"), c.get("speedup_hi")) for k, c in claims.items()}
    assert got[("12p", 0)] == (0.95, 1.3) and got[("8p", 0)] == (None, None)

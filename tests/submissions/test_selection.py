"""Issue 23, item 7: agent entries say what they are (SWE-bench's rule). An upload declares how
its samples were chosen (pass@k, best@k with a non-oracle selector, a single attempt); the
submission stores it, the leaderboard shows a badge and filters on it; without a declaration
an entry is "undeclared"."""

import io
import json

import pytest

from jaxbench import traces as trace_format
from submissions import intake
from submissions.intake import IntakeError
from submissions.models import Submission
from tests.submissions.conftest import kernel
from tests.submissions.test_api import JSON, NDJSON, kernels_body
from tests.submissions.test_intake import HEADER, s, trace_bytes


@pytest.fixture
def alice(api, people):
    return api(people.tokens["alice"])


def upload(people, *objs):
    return intake.create_trace_submission(people.team_a, people.alice, io.BytesIO(trace_bytes(*objs)))


def errors_of(people, *objs):
    with pytest.raises(IntakeError) as exc:
        upload(people, *objs)
    return [(e.get("line"), e.get("field"), e["message"]) for e in exc.value.errors]


def test_a_trace_declares_how_its_samples_were_chosen(catalog, people):
    sub = upload(people, {**HEADER, "selection": "pass_at_k"}, s("12p", 0), s("12p", 1))
    assert (sub.selection, sub.selector) == ("pass_at_k", "")
    best = upload(
        people, {**HEADER, "selection": "best_at_k", "selector": "own timing on random inputs"}, s("12p", 0, code="# b")
    )
    assert (best.selection, best.selector) == ("best_at_k", "own timing on random inputs")
    single = upload(people, {**HEADER, "selection": "single_attempt"}, s("12p", 0, code="# c"), s("8p", 0))
    assert single.selection == "single_attempt"
    old = upload(people, HEADER, s("12p", 0, code="# d"))  # traces written before the field
    assert old.selection == trace_format.UNDECLARED == "undeclared"


@pytest.mark.parametrize(
    "header, samples, line, field, words",
    [
        ({"selection": "best_at_k"}, [s("12p", 0)], 1, "selector", "name the non-oracle selector"),
        ({"selection": "pass_at_k", "selector": "x"}, [s("12p", 0)], 1, "selector", "best_at_k\" only"),
        ({"selection": "oracle"}, [s("12p", 0)], 1, "selection", "must be one of"),
        ({"selection": "single_attempt"}, [s("12p", 0), s("12p", 1)], 3, "selection", "one sample per workload"),
        (
            {"selection": "best_at_k", "selector": "reward model"},
            [s("8p", 0), s("12p", 0), s("12p", 1)],
            4,
            "selection",
            "workload 12p has 2 samples",
        ),
    ],
)
def test_a_declaration_that_does_not_hold_is_refused(catalog, people, header, samples, line, field, words):
    errs = errors_of(people, {**HEADER, **header}, *samples)
    assert any(ln == line and f == field and words in m for ln, f, m in errs), errs
    assert not Submission.objects.exists()


def test_the_schema_and_docs_know_the_field(client, catalog):
    schema = trace_format.json_schema()
    header = json.dumps(schema)
    assert '"selection"' in header and "pass_at_k" in header and "best_at_k" in header and "single_attempt" in header
    page = client.get("/docs/trace-format/").content.decode()
    assert "selection" in page and "best_at_k" in page and "undeclared" in page


def test_kernel_uploads_declare_by_api_and_form(alice, catalog, people):
    r = alice.post(
        "/api/v1/submissions/",
        kernels_body(selection="best_at_k", selector="picked by my own benchmark of 8 drafts"),
        content_type=JSON,
    )
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["selection"] == "best_at_k" and body["selector"].startswith("picked by")
    assert Submission.objects.get(pk=body["id"]).selection == "best_at_k"
    # a kernel upload holds one file per workload: pass@k is not what it is
    r = alice.post("/api/v1/submissions/", kernels_body(selection="pass_at_k", upload_key="k2"), content_type=JSON)
    assert r.status_code == 400 and "selection" in r.content.decode()
    r = alice.post("/api/v1/submissions/", kernels_body(selection="best_at_k", upload_key="k3"), content_type=JSON)
    assert r.status_code == 400 and "selector" in r.content.decode()
    r = alice.post("/api/v1/submissions/", kernels_body(upload_key="k4", kernels={"8p": kernel()}), content_type=JSON)
    assert r.status_code == 201 and r.json()["selection"] == "undeclared"


def test_a_raw_trace_upload_keeps_its_declaration(alice, catalog):
    data = trace_bytes({**HEADER, "selection": "single_attempt"}, s("12p", 0))
    r = alice.post("/api/v1/submissions/trace/", data, content_type=NDJSON)
    assert r.status_code == 201, r.content
    assert r.json()["selection"] == "single_attempt"


def test_the_web_form_offers_the_declaration(client, catalog, people):
    client.force_login(people.alice)
    page = client.get("/submit/").content.decode()
    assert 'name="selection"' in page and 'name="selector"' in page


def test_the_cli_declares_a_kernel_uploads_selection_and_status_shows_the_queue(
    transactional_db, live_server, catalog, people, tmp_path
):
    from tests.submissions.test_cli import cli

    kernel_dir = tmp_path / "outputs"
    kernel_dir.mkdir()
    (kernel_dir / "12p.py").write_text(kernel())
    (kernel_dir / "8p.py").write_text(kernel("gemm"))

    rc, out, err = cli(
        "submit-kernels",
        kernel_dir,
        "--hardware",
        "cpu",
        "--method",
        "Autocomp",
        "--selection",
        "best_at_k",
        "--selector",
        "fastest of 8 drafts on my own random inputs",
        url=live_server.url,
        token=people.tokens["alice"],
    )
    assert rc == 0, err
    sub = Submission.objects.get()
    assert (sub.selection, sub.selector) == ("best_at_k", "fastest of 8 drafts on my own random inputs")
    # the rows wait (no broker here, no worker): status says where they stand
    rc, out, err = cli("status", sub.pk, url=live_server.url, token=people.tokens["alice"])
    assert rc == 0, err
    assert "Queue: 0 row(s) ahead of yours on eval.cpu; 2 of yours queued there" in out
    assert "no live worker" in out

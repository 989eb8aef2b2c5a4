"""The REST API with real Bearer tokens over the test client: catalogue, uploads of every kind,
idempotency, visibility and permissions, filters, throttling, clear 4xx bodies, OpenAPI."""

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from catalog.models import Baseline, ExpertReference, HardwareTarget, Workload
from evaluator.models import Evaluation
from jaxbench.traces import FORMAT, dumps_lines, example_trace
from submissions import intake
from submissions.models import Submission
from tests.submissions.conftest import counts, kernel, make_zip

pytestmark = pytest.mark.django_db
JSON = "application/json"
NDJSON = "application/x-ndjson"


@pytest.fixture
def alice(api, people):
    return api(people.tokens["alice"])


def kernels_body(**extra):
    body = {"hardware": "cpu", "method": "Hand-written", "model": "Human", "kernels": {"12p": kernel()}}
    body.update(extra)
    return json.dumps(body)


# -- catalogue --------------------------------------------------------------------------------


def test_workloads_list_and_detail_by_any_name(api, catalog):
    anon = api()
    data = anon.get("/api/v1/workloads/").json()
    assert [w["id"] for w in data["results"]] == ["1p", "8p", "12p", "13p", "18k"]
    assert "reference_source" not in data["results"][0]
    for name in ("12p", "12p-rmsnorm", "12p_RMSNorm", "12p_RMSNorm.py"):
        d = anon.get(f"/api/v1/workloads/{name}/").json()
        assert d["id"] == "12p" and d["params"]["full"] == {"n": 1024}
        assert d["shapes"]["small"]["inputs"][0]["shape"] == [8] and "def reference" in d["reference_source"]
    assert anon.get("/api/v1/workloads/99p/").status_code == 404
    assert [w["id"] for w in anon.get("/api/v1/workloads/", {"source": "kernelbench-l2"}).json()["results"]] == ["18k"]


def test_hardware_baselines_and_experts_filters(api, catalog):
    anon = api()
    slugs = [h["slug"] for h in anon.get("/api/v1/hardware/").json()["results"]]
    assert "cpu" in slugs and "tpu-v6e" in slugs
    assert anon.get("/api/v1/hardware/tpu-v6e/").json()["queue"] == "eval.tpu-v6e"
    cpu, tpu = HardwareTarget.objects.get(slug="cpu"), HardwareTarget.objects.get(slug="tpu-v6e")
    w12, w8 = Workload.objects.get(wid="12p"), Workload.objects.get(wid="8p")
    for w in (w12, w8):
        for h in (cpu, tpu):
            Baseline.objects.create(
                workload=w, hardware=h, profile=h.profile, jax_version="0.10.2", harness_version="1.0.0", median_s=0.001
            )
    ExpertReference.objects.create(workload=w12, hardware=tpu, implementation="tokamax", speedup=2.0)
    ExpertReference.objects.create(workload=w8, hardware=cpu, implementation="tokamax", speedup=1.1)
    got = anon.get("/api/v1/baselines/", {"hardware": "tpu-v6e", "workload": "12p_RMSNorm"}).json()["results"]
    assert [(b["workload"], b["hardware"]) for b in got] == [("12p", "tpu-v6e")]
    assert len(anon.get("/api/v1/baselines/", {"workload": "12p,8p-gemm"}).json()["results"]) == 4
    assert anon.get("/api/v1/baselines/", {"workload": "nope"}).json()["results"] == []
    got = anon.get("/api/v1/experts/", {"hardware": "tpu-v6e"}).json()["results"]
    assert [(e["workload"], e["speedup"]) for e in got] == [("12p", 2.0)]
    assert len(anon.get("/api/v1/experts/", {"workload": "8p"}).json()["results"]) == 1


# -- creating ---------------------------------------------------------------------------------


def test_create_with_json_kernels(alice, catalog, people):
    r = alice.post(
        "/api/v1/submissions/",
        kernels_body(upload_key="k-1", kernels={"12p": kernel(), "8p_GEMM": kernel()}),
        content_type=JSON,
    )
    assert r.status_code == 201, r.json()
    d = r.json()
    assert d["created"] is True and d["candidates"] == 2 and d["team"] == "team-a" and d["is_public"] is False
    assert r["Location"].endswith(f"/api/v1/submissions/{d['id']}/")
    assert d["links"]["status"].endswith(f"/api/v1/submissions/{d['id']}/status/")
    again = alice.post("/api/v1/submissions/", kernels_body(upload_key="k-1"), content_type=JSON)
    assert again.status_code == 200 and again.json()["id"] == d["id"] and again.json()["created"] is False
    assert counts() == (1, 2, 2)


def test_create_with_multipart_files_and_zip(alice, catalog):
    r = alice.post(
        "/api/v1/submissions/",
        {
            "hardware": "tpu-v6e",
            "method": "Autocomp",
            "model": "Gemini 3 Flash",
            "files": [
                SimpleUploadedFile("12p_RMSNorm.py", kernel().encode()),
                SimpleUploadedFile("8p.py", kernel().encode()),
            ],
            "zip": SimpleUploadedFile("more.zip", make_zip({"13p_Cross_Entropy/kernel.py": kernel()})),
        },
    )
    assert r.status_code == 201, r.json()
    sub = Submission.objects.get(pk=r.json()["id"])
    assert sorted(sub.candidates.values_list("workload__wid", flat=True)) == ["12p", "13p", "8p"]
    assert set(Evaluation.objects.filter(candidate__submission=sub).values_list("stage", flat=True)) == {"precheck"}


def test_create_errors_are_structured_per_file(alice, catalog):
    r = alice.post(
        "/api/v1/submissions/",
        {
            "hardware": "cpu",
            "method": "M",
            "files": [SimpleUploadedFile("12p.py", b"def workload(:"), SimpleUploadedFile("77p.py", kernel().encode())],
        },
    )
    assert r.status_code == 400
    body = r.json()
    assert "nothing was stored" in body["detail"]
    assert {(e["file"], e["field"], e["input"]) for e in body["errors"]} == {
        ("12p.py", "syntax", "files"),
        ("77p.py", "name", "files"),
    }
    assert counts() == (0, 0, 0)


def test_trace_upload_multipart_and_raw_body(alice, catalog):
    data = dumps_lines(example_trace()).encode()
    r = alice.post("/api/v1/submissions/trace/", {"trace": SimpleUploadedFile("t.jsonl", data), "upload_key": "tr-1"})
    assert r.status_code == 201, r.json()
    d = r.json()
    assert d["kind"] == "trace" and d["candidates"] == 3 and d["sampling"] == "sequential" and d["budget"] == 144
    assert d["settings"] == {"temperature": 1.0, "context": "curated TPU notes"} and d["upload_key"] == "tr-1"
    # the same trace streamed as the raw body, with the key as a query parameter: the retry is recognised
    r2 = alice.post("/api/v1/submissions/trace/?upload_key=tr-1", data, content_type=NDJSON)
    assert r2.status_code == 200 and r2.json()["id"] == d["id"]
    r3 = alice.post("/api/v1/submissions/trace/?upload_key=tr-2&team=team-a", data, content_type="application/jsonl")
    assert r3.status_code == 201 and r3.json()["id"] != d["id"]
    assert counts() == (2, 6, 6)


@pytest.mark.parametrize(
    "data, line, field",
    [
        (b"", None, "trace"),
        (b'{"format": "jaxbench-trace/2"}\n', 1, "format"),
        (
            json.dumps(
                {"format": FORMAT, "method": "m", "model": "x", "hardware": "gpu-b9000", "sampling": "sequential"}
            ).encode()
            + b'\n{"workload": "12p", "index": 0, "code": ""}\n',
            1,
            "hardware",
        ),
        (
            json.dumps(
                {"format": FORMAT, "method": "m", "model": "x", "hardware": "cpu", "sampling": "sequential"}
            ).encode()
            + b'\n{"workload": "12p", "index": 0, "code": ""}\n{"workload": "12p", "code": ""}\n',
            3,
            "index",
        ),
        (
            json.dumps(
                {"format": FORMAT, "method": "m", "model": "x", "hardware": "cpu", "sampling": "sequential"}
            ).encode()
            + b'\n{"workload": "12p", "index": 0, "code": "\xff"}\n',
            2,
            None,
        ),
    ],
)
def test_trace_errors_name_line_and_field(alice, catalog, data, line, field):
    r = alice.post("/api/v1/submissions/trace/", data, content_type=NDJSON)
    assert r.status_code == 400
    errors = r.json()["errors"]
    assert any(e.get("line") == line and e["field"] == field for e in errors), errors
    assert counts() == (0, 0, 0)


def test_team_choice(api, catalog, people):
    from submissions.models import Membership

    loner = api(people.tokens["loner"])
    r = loner.post("/api/v1/submissions/", kernels_body(), content_type=JSON)
    assert r.status_code == 400 and "in no team" in r.json()["errors"][0]["message"]
    Membership.objects.create(team=people.team_b, user=people.alice)
    alice = api(people.tokens["alice"])
    r = alice.post("/api/v1/submissions/", kernels_body(), content_type=JSON)
    assert r.status_code == 400 and "several teams" in r.json()["errors"][0]["message"]
    r = alice.post("/api/v1/submissions/", kernels_body(team="team-b"), content_type=JSON)
    assert r.status_code == 201 and r.json()["team"] == "team-b"
    bob = api(people.tokens["bob"])
    r = bob.post("/api/v1/submissions/", kernels_body(team="team-a"), content_type=JSON)
    assert r.status_code == 400 and r.json()["errors"][0]["field"] == "team"


def test_authentication_is_required_to_submit(api, catalog, people):
    assert api().post("/api/v1/submissions/", kernels_body(), content_type=JSON).status_code == 401
    r = api("jxb_wrong").post("/api/v1/submissions/", kernels_body(), content_type=JSON)
    assert r.status_code == 401 and "Invalid or revoked token" in r.json()["detail"]
    people.alice.api_tokens.get().revoke()
    assert api(people.tokens["alice"]).get("/api/v1/submissions/").status_code == 401


# -- bad input never 5xx ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, content_type",
    [
        ("{not json", JSON),
        (b"\xff\xfe\x00{", JSON),
        (json.dumps([1, 2]), JSON),
        (json.dumps({"hardware": 5, "method": ["x"], "kernels": "12p"}), JSON),
        (json.dumps({"hardware": "cpu", "method": "m", "kernels": {"12p": 5}}), JSON),
        (json.dumps({"hardware": "cpu", "method": "m", "kernels": {"12p": "\ud800"}}), JSON),
        (json.dumps({"hardware": "cpu", "method": "m", "kernels": {"12p": kernel()}, "upload_key": {"a": 1}}), JSON),
        (json.dumps({"hardware": "cpu", "method": "m", "kernels": {"12p": "x" * (300 * 1024)}}), JSON),
        (json.dumps({"hardware": "cpu", "method": "m"}), JSON),
        (
            b"--xyz\r\nContent-Disposition: form-data; name=\"files\"; filename=\"12p.py\"\r\n\r\nunterminated",
            "multipart/form-data; boundary=xyz",
        ),
        (b"garbage", "multipart/form-data"),
        (b"garbage", "multipart/form-data; boundary="),
        (b"a=1", "text/plain"),
    ],
)
def test_bad_kernel_requests_get_clear_4xx(alice, catalog, body, content_type):
    r = alice.post("/api/v1/submissions/", body, content_type=content_type)
    assert 400 <= r.status_code < 500, (r.status_code, r.content[:300])
    assert r.json().get("detail") or r.json().get("errors")
    assert counts() == (0, 0, 0)


def test_huge_bodies_and_too_many_files(alice, catalog, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    r = alice.post("/api/v1/submissions/", kernels_body(kernels={"12p": kernel() + "#" * 5000}), content_type=JSON)
    assert r.status_code == 413 and "larger than" in r.json()["detail"]
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 64 * 1024 * 1024
    settings.DATA_UPLOAD_MAX_NUMBER_FILES = 3
    files = [SimpleUploadedFile(f"{w}.py", kernel().encode()) for w in ("1p", "8p", "12p", "13p", "18k")]
    r = alice.post("/api/v1/submissions/", {"hardware": "cpu", "method": "m", "files": files})
    assert r.status_code == 400 and "Malformed request" in r.json()["detail"]
    huge = SimpleUploadedFile("12p.py", b"#" * (2 * 1024 * 1024))
    r = alice.post("/api/v1/submissions/", {"hardware": "cpu", "method": "m", "files": [huge]})
    assert r.status_code == 400 and r.json()["errors"][0]["field"] == "size"
    r = alice.post("/api/v1/submissions/trace/", b"x", content_type=NDJSON, CONTENT_LENGTH=str(10**10))
    assert r.status_code == 413
    assert counts() == (0, 0, 0)


def test_trace_must_be_a_file_field(alice, catalog):
    r = alice.post("/api/v1/submissions/trace/", {"trace": "not a file"})
    assert r.status_code == 400 and r.json()["errors"][0]["field"] == "trace"
    # a JSON body is a trajectory document now (ATIF, ADK): this one is neither, a clear 400
    r = alice.post("/api/v1/submissions/trace/", {"trace": "x"}, content_type=JSON)
    assert r.status_code == 400 and "not a trace this portal reads" in r.json()["errors"][0]["message"]
    r = alice.post("/api/v1/submissions/trace/", {"trace": "x"}, content_type="text/csv")
    assert r.status_code == 415


# -- reading, visibility, permissions ---------------------------------------------------------


@pytest.fixture
def subs(catalog, people):
    """A private and a published submission of team A, and a private one of team B."""
    private = intake.create_kernel_submission(
        people.team_a,
        people.alice,
        "cpu",
        {"method": "P"},
        [("12p.py", kernel()), ("8p.py", kernel()), ("13p.py", kernel())],
    )
    public = intake.create_kernel_submission(
        people.team_a, people.alice, "cpu", {"method": "Q", "upload_key": "q"}, [("12p.py", kernel())]
    )
    public.publish()
    other = intake.create_kernel_submission(people.team_b, people.bob, "cpu", {"method": "B"}, [("12p.py", kernel())])
    return {"private": private, "public": public, "other": other}


def test_list_shows_only_own_teams(api, people, subs):
    ids = lambda who: sorted(s["id"] for s in api(people.tokens[who]).get("/api/v1/submissions/").json()["results"])
    assert ids("alice") == sorted([subs["private"].pk, subs["public"].pk])
    assert ids("bob") == [subs["other"].pk]
    assert ids("staff") == sorted(s.pk for s in subs.values())
    assert ids("loner") == []
    assert api().get("/api/v1/submissions/").status_code == 401
    got = api(people.tokens["alice"]).get("/api/v1/submissions/", {"published": "true"}).json()["results"]
    assert [s["id"] for s in got] == [subs["public"].pk]


READS = ["/api/v1/submissions/{pk}/", "/api/v1/submissions/{pk}/status/", "/api/v1/submissions/{pk}/evaluations/"]


@pytest.mark.parametrize("path", READS)
@pytest.mark.parametrize(
    "who, private_code", [(None, 404), ("bob", 404), ("loner", 404), ("alice", 200), ("staff", 200)]
)
def test_read_permission_matrix(api, people, subs, path, who, private_code):
    client = api(people.tokens[who] if who else None)
    assert client.get(path.format(pk=subs["private"].pk)).status_code == private_code
    assert client.get(path.format(pk=subs["public"].pk)).status_code == 200
    assert client.get(path.format(pk=999999)).status_code == 404


@pytest.mark.parametrize("action", ["publish", "withdraw"])
@pytest.mark.parametrize(
    "who, private_code, public_code",
    [(None, 401, 401), ("bob", 404, 403), ("loner", 404, 403), ("alice", 200, 200), ("staff", 403, 403)],
)
def test_publish_withdraw_permission_matrix(api, people, subs, action, who, private_code, public_code):
    client = api(people.tokens[who] if who else None)
    for kind, code in (("private", private_code), ("public", public_code)):
        sub = subs[kind]
        before = (sub.published_at, sub.withdrawn_at)
        r = client.post(f"/api/v1/submissions/{sub.pk}/{action}/")
        assert r.status_code == code, (kind, r.content)
        sub.refresh_from_db()
        if code == 200:
            assert sub.is_public == (action == "publish")
        else:
            assert (sub.published_at, sub.withdrawn_at) == before


def test_private_results_never_leak(api, people, subs):
    bob = api(people.tokens["bob"])
    body = json.dumps(
        [bob.get("/api/v1/submissions/").json(), bob.get(f"/api/v1/submissions/{subs['public'].pk}/").json()]
    )
    assert f'"id": {subs["private"].pk},' not in body
    public = bob.get(f"/api/v1/submissions/{subs['public'].pk}/").json()
    assert public["upload_key"] is None and public["created_by"] is None  # the team's own bookkeeping
    mine = api(people.tokens["alice"]).get(f"/api/v1/submissions/{subs['public'].pk}/").json()
    assert mine["upload_key"] == "q" and mine["created_by"] == "alice"
    api(people.tokens["alice"]).post(f"/api/v1/submissions/{subs['public'].pk}/withdraw/")
    assert bob.get(f"/api/v1/submissions/{subs['public'].pk}/").status_code == 404
    assert api().get(f"/api/v1/submissions/{subs['public'].pk}/evaluations/").status_code == 404


def test_status_is_the_evaluator_progress(api, people, subs):
    sub = subs["private"]
    Evaluation.objects.filter(candidate__submission=sub, candidate__workload__wid="12p").update(
        state="done", outcome="correct_faster", speedup=1.5
    )
    st = api(people.tokens["alice"]).get(f"/api/v1/submissions/{sub.pk}/status/").json()
    assert st["submission"] == sub.pk and st["total"] == 3 and st["done"] == 1 and not st["finished"]
    assert st["outcomes"] == {"correct_faster": 1} and st["stages"]["main"] == {"done": 1, "queued": 2}


def test_evaluations_are_paginated_and_filterable(api, people, subs):
    sub = subs["private"]
    evs = Evaluation.objects.filter(candidate__submission=sub)
    evs.filter(candidate__workload__wid="12p").update(state="done", outcome="correct_faster", speedup=1.5)
    evs.filter(candidate__workload__wid="8p").update(state="done", outcome="compile_error")
    alice = api(people.tokens["alice"])
    url = f"/api/v1/submissions/{sub.pk}/evaluations/"
    page = alice.get(url, {"page_size": 2}).json()
    assert page["count"] == 3 and len(page["results"]) == 2 and page["next"]
    assert [e["workload"] for e in page["results"]] == ["8p", "12p"]
    assert [e["workload"] for e in alice.get(page["next"].replace("http://testserver", "")).json()["results"]] == [
        "13p"
    ]
    assert [e["workload"] for e in alice.get(url, {"workload": "12p_RMSNorm"}).json()["results"]] == ["12p"]
    assert [e["workload"] for e in alice.get(url, {"outcome": "compile_error"}).json()["results"]] == ["8p"]
    both = alice.get(url + "?outcome=compile_error&outcome=correct_faster").json()["results"]
    assert len(both) == 2
    assert [e["workload"] for e in alice.get(url, {"state": "queued"}).json()["results"]] == ["13p"]
    bad = alice.get(url, {"outcome": "brilliant"})
    assert bad.status_code == 400
    e = alice.get(url, {"workload": "12p"}).json()["results"][0]
    assert e["speedup"] == 1.5 and e["index"] == 0 and e["stage"] == "main" and e["hardware"] == "cpu"


def test_uploads_are_throttled_per_token(api, catalog, people, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "upload": "2/min"},
    }
    alice, bob = api(people.tokens["alice"]), api(people.tokens["bob"])
    codes = [
        alice.post("/api/v1/submissions/", kernels_body(upload_key=f"t{i}"), content_type=JSON).status_code
        for i in range(3)
    ]
    assert codes == [201, 201, 429]
    assert bob.post("/api/v1/submissions/", kernels_body(), content_type=JSON).status_code == 201
    assert alice.get("/api/v1/submissions/").status_code == 200  # reads have their own budget


# -- OpenAPI, docs, mounting ------------------------------------------------------------------


def test_openapi_schema_generates_without_warnings(tmp_path):
    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    text = out.read_text()
    for path in (
        "/api/v1/submissions/trace/",
        "/api/v1/submissions/{id}/evaluations/",
        "/api/v1/workloads/{id}/",
        "/api/v1/baselines/",
        "/api/v1/experts/",
        "/api/v1/hardware/",
        "/api/v1/submissions/{id}/publish/",
    ):
        assert f"  {path}:" in text
    assert "bearerAuth" in text and "application/x-ndjson" in text


def test_api_docs_pages_are_served_locally(client, db):
    # Every asset must come from this server; the pages also carry random CSRF tokens and
    # nonces, so a substring test like "cdn" would fail by chance.
    for path in ("/api/docs/", "/api/redoc/"):
        html = client.get(path).content.decode()
        assets = re.findall(r'(?:src|href)\s*=\s*["\']([^"\']+)', html)
        assert assets and "/static/drf_spectacular_sidecar/" in html
        off_site = [a for a in assets if re.match(r"(?:[a-z][a-z0-9+.-]*:)?//", a, re.I)]
        assert not off_site, off_site
        assert not re.search(r"https?://(?!testserver)[^\s\"']*\.(?:js|css)", html), "script/style from another host"
    assert client.get("/api/schema/").status_code == 200


def test_leaderboard_api_is_mounted():
    from django.urls import resolve
    from django.urls.exceptions import Resolver404

    import portal.api_urls

    assert any(getattr(p, "pattern", None) and str(p.pattern) == "v1/leaderboard/" for p in portal.api_urls.urlpatterns)
    try:
        resolve("/api/v1/leaderboard/")
    except Resolver404:
        pass  # mounted, the leaderboard module has not filled it yet


def test_raw_trace_is_streamed_not_loaded(alice, catalog, monkeypatch):
    """The raw body reaches the intake as a stream, never as request.body."""
    from django.http import HttpRequest

    monkeypatch.setattr(HttpRequest, "body", property(lambda self: (_ for _ in ()).throw(AssertionError("body read"))))
    r = alice.post("/api/v1/submissions/trace/", dumps_lines(example_trace()).encode(), content_type=NDJSON)
    assert r.status_code == 201


def test_browsable_api_pages_render(client, people, subs):
    client.force_login(people.alice)
    pk = subs["private"].pk
    for path in (
        "/api/v1/submissions/",
        f"/api/v1/submissions/{pk}/",
        f"/api/v1/submissions/{pk}/status/",
        f"/api/v1/submissions/{pk}/evaluations/",
        "/api/v1/workloads/",
        "/api/v1/workloads/12p/",
        "/api/v1/baselines/",
        "/api/v1/experts/",
        "/api/v1/hardware/",
    ):
        r = client.get(path, HTTP_ACCEPT="text/html")
        assert r.status_code == 200 and b"<html" in r.content, path


def test_session_uploads_need_the_csrf_token(people, catalog):
    from django.test import Client

    c = Client(enforce_csrf_checks=True)
    c.force_login(people.alice)
    r = c.post("/api/v1/submissions/", kernels_body(), content_type=JSON)
    assert r.status_code == 403 and "CSRF" in r.json()["detail"]

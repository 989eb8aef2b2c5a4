"""The web channel: /submit/ (kernel rows, zip, trace), /submissions/, publish/withdraw, and the
trace format's docs page and JSON Schema — through Django's test client with real uploads."""

import io
import json
import re

import jsonschema
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from jaxbench.traces import FORMAT, dumps_lines, example_trace
from submissions.models import Membership, Submission, Team
from tests.submissions.conftest import counts, kernel, make_zip

pytestmark = pytest.mark.django_db


def py(name, text):
    return SimpleUploadedFile(name, text.encode() if isinstance(text, str) else text, "text/x-python")


def form(**extra):
    data = {
        "team": "team-a",
        "hardware": "cpu",
        "method": "Hand-written",
        "model": "Human",
        "description": "",
        "link": "",
        "upload_key": "",
    }
    data.update(extra)
    return data


def detail_path(pk):
    return f"/submissions/{pk}/"


def test_no_team_gets_a_clear_message(client, catalog, people):
    client.force_login(people.loner)
    html = client.get("/submit/").content.decode()
    assert 'id="no-team"' in html and 'href="/teams/new/"' in html and "kernel-form" not in html


def test_anonymous_is_sent_to_log_in(client, catalog):
    r = client.get("/submit/")
    assert r.status_code == 302 and "/accounts/login/" in r["Location"]


def test_form_has_a_row_per_workload_datalists_and_hidden_team(client, catalog, people):
    client.force_login(people.alice)
    html = client.get("/submit/").content.decode()
    for w in catalog:
        assert f'name="file_{w.wid}"' in html and f'id="row-{w.wid}"' in html
    assert 'list="known-methods"' in html and '<option value="Autocomp">' in html
    assert '<option value="Gemini 3 Flash">' in html
    assert 'type="hidden" name="team" value="team-a"' in html
    assert 'name="zip"' in html and 'action="/submit/trace/"' in html


def test_team_selector_for_users_in_several_teams(client, catalog, people):
    Membership.objects.create(team=people.team_b, user=people.alice)
    client.force_login(people.alice)
    html = client.get("/submit/").content.decode()
    assert re.search(r'<select name="team"[^>]*>', html)
    assert '<option value="team-a"' in html and '<option value="team-b"' in html
    r = client.post("/submit/", form(team="team-b", file_12p=py("x.py", kernel())))
    assert r.status_code == 302
    assert Submission.objects.get().team == people.team_b


def test_kernel_rows_submit_and_redirect_to_the_detail_page(client, catalog, people, no_broker):
    client.force_login(people.alice)
    r = client.post("/submit/", form(file_12p=py("optimized.py", kernel()), file_8p=py("8p_GEMM.py", kernel("b"))))
    sub = Submission.objects.get()
    assert r.status_code == 302 and r["Location"] == detail_path(sub.pk)
    assert sorted(sub.candidates.values_list("workload__wid", flat=True)) == ["12p", "8p"]
    assert sub.kind == "kernels" and sub.method == "Hand-written" and sub.model_name == "Human"
    assert sub.upload_key is None or sub.upload_key.startswith("web-")


def test_a_zip_of_public_harness_folders(client, catalog, people):
    client.force_login(people.alice)
    z = make_zip(
        {
            "12p_RMSNorm/optimized.py": kernel(),
            "12p_RMSNorm/baseline.py": "x",
            "13p_Cross_Entropy/kernel.py": kernel(),
            "13p_Cross_Entropy/log.txt": "...",
        }
    )
    r = client.post("/submit/", form(zip=SimpleUploadedFile("outputs.zip", z, "application/zip")))
    assert r.status_code == 302
    assert sorted(Submission.objects.get().candidates.values_list("workload__wid", flat=True)) == ["12p", "13p"]


def test_the_hidden_form_key_makes_a_resubmitted_page_idempotent(client, catalog, people):
    client.force_login(people.alice)
    key = re.search(r'name="upload_key" value="(web-[^"]+)"', client.get("/submit/").content.decode()).group(1)
    r1 = client.post("/submit/", form(upload_key=key, file_12p=py("a.py", kernel())))
    r2 = client.post("/submit/", form(upload_key=key, file_12p=py("a.py", kernel())), follow=False)
    assert r1["Location"] == r2["Location"] and counts()[0] == 1


def row_errors(html, wid):
    row = re.search(rf'<tr id="row-{wid}">(.*?)</tr>', html, re.S).group(1)
    return re.findall(r"<li>(.*?)</li>", row, re.S)


def test_errors_are_shown_per_file_next_to_its_row_and_nothing_is_stored(client, catalog, people):
    client.force_login(people.alice)
    r = client.post(
        "/submit/",
        form(
            file_12p=py("rms.py", "def workload(x:\n"),
            file_8p=py("gemm.py", b"\xff\xfe bad"),
            file_1p=py("fa.py", "def helper(): pass\n"),
            file_13p=py("13p.py", kernel()),
            file_18k=py("big.py", "#" * (300 * 1024)),
        ),
    )
    assert r.status_code == 200
    html = r.content.decode()
    assert any("not valid Python" in e for e in row_errors(html, "12p"))
    assert any("not UTF-8" in e for e in row_errors(html, "8p"))
    assert any("no module-level" in e for e in row_errors(html, "1p"))
    assert row_errors(html, "13p") == []
    assert any("larger than 256 KB" in e for e in row_errors(html, "18k"))
    assert counts() == (0, 0, 0)


def test_zip_errors_are_shown_next_to_the_zip_field(client, catalog, people):
    client.force_login(people.alice)
    z = make_zip({"../../evil.py": kernel(), "12p_RMSNorm/kernel.py": "def workload(:"})
    r = client.post("/submit/", form(zip=SimpleUploadedFile("o.zip", z)))
    html = r.content.decode()
    zip_errors = re.search(r'id="zip-errors">(.*?)</ul>', html, re.S).group(1)
    assert (
        "o.zip: ../../evil.py: unsafe path" in zip_errors
        and "o.zip: 12p_RMSNorm/kernel.py: not valid Python" in zip_errors
    )
    assert counts() == (0, 0, 0)


def test_form_level_errors(client, catalog, people):
    client.force_login(people.alice)
    r = client.post("/submit/", form())
    assert "Choose at least one kernel file" in r.content.decode()
    r = client.post("/submit/", form(team="team-b", file_12p=py("a.py", kernel())))
    assert "Select a valid choice" in r.content.decode()  # not her team
    r = client.post("/submit/", form(method="", link="not a url", file_12p=py("a.py", kernel())))
    html = r.content.decode()
    assert "This field is required" in html and "Enter a valid URL" in html
    assert counts() == (0, 0, 0)


def test_trace_upload_through_the_form(client, catalog, people):
    client.force_login(people.alice)
    data = dumps_lines(example_trace()).encode()
    r = client.post(
        "/submit/trace/", {"team": "team-a", "upload_key": "t-1", "trace": SimpleUploadedFile("run.jsonl", data)}
    )
    sub = Submission.objects.get()
    assert r.status_code == 302 and r["Location"] == detail_path(sub.pk)
    assert sub.kind == "trace" and sub.candidates.count() == 3 and sub.upload_key == "t-1"
    r = client.post(
        "/submit/trace/", {"team": "team-a", "upload_key": "t-1", "trace": SimpleUploadedFile("run.jsonl", data)}
    )
    assert r["Location"] == detail_path(sub.pk) and counts()[0] == 1


def test_trace_errors_name_their_lines_next_to_the_file_field(client, catalog, people):
    client.force_login(people.alice)
    bad = (
        json.dumps({"format": FORMAT, "method": "m", "model": "x", "hardware": "cpu", "sampling": "sequential"})
        + "\n"
        + json.dumps({"workload": "12p", "index": 1, "code": ""})
        + "\n"
    ).encode()
    r = client.post("/submit/trace/", {"team": "team-a", "trace": SimpleUploadedFile("run.jsonl", bad)})
    html = r.content.decode()
    assert r.status_code == 200 and "line 2, field &#x27;index&#x27;" in html and "missing 0" in html
    assert counts() == (0, 0, 0)


def test_my_submissions_lists_only_my_teams_with_progress_and_actions(client, catalog, people):
    from submissions import intake

    mine = intake.create_kernel_submission(
        people.team_a, people.alice, "cpu", {"method": "Mine"}, [("12p.py", kernel()), ("8p.py", kernel())]
    )
    theirs = intake.create_kernel_submission(
        people.team_b, people.bob, "cpu", {"method": "Theirs"}, [("12p.py", kernel())]
    )
    theirs.publish()
    from evaluator.models import Evaluation

    Evaluation.objects.filter(candidate__submission=mine, candidate__workload__wid="12p").update(
        state="done", outcome="correct_faster", speedup=1.4
    )
    client.force_login(people.alice)
    html = client.get("/submissions/").content.decode()
    assert f'id="submission-{mine.pk}"' in html and f'id="submission-{theirs.pk}"' not in html
    row = re.search(rf'id="submission-{mine.pk}">(.*?)</tr>', html, re.S).group(1)
    assert "1/2" in row and "1 faster" in row and "private" in row
    assert f'action="/submissions/{mine.pk}/publish/"' in row
    # a tie (the interval holds 1) is done and correct, counted apart, never as faster
    Evaluation.objects.filter(candidate__submission=mine, candidate__workload__wid="8p").update(
        state="done", outcome="correct_tie", speedup=1.02, speedup_lo=0.97, speedup_hi=1.08
    )
    html = client.get("/submissions/").content.decode()
    row = re.search(rf'id="submission-{mine.pk}">(.*?)</tr>', html, re.S).group(1)
    assert "2/2" in row and "1 faster" in row and "1 tie<" in row


def test_publish_and_withdraw_from_the_list(client, catalog, people):
    from submissions import intake

    sub = intake.create_kernel_submission(people.team_a, people.alice, "cpu", {"method": "M"}, [("12p.py", kernel())])
    client.force_login(people.alice)
    r = client.post(f"/submissions/{sub.pk}/publish/", {"next": "/submissions/?team=team-a"})
    assert r.status_code == 302 and r["Location"] == "/submissions/?team=team-a"
    sub.refresh_from_db()
    assert sub.is_public
    html = client.get("/submissions/").content.decode()
    assert f'action="/submissions/{sub.pk}/withdraw/"' in html and "published" in html
    r = client.post(f"/submissions/{sub.pk}/withdraw/", {"next": "https://evil.example/"})
    assert r.status_code == 302 and r["Location"] == "/submissions/"
    sub.refresh_from_db()
    assert not sub.is_public and sub.withdrawn_at is not None
    # a GET (the URL left in the address bar) goes to the submission's page; PUT stays refused
    r = client.get(f"/submissions/{sub.pk}/publish/")
    assert r.status_code == 302 and r["Location"] == f"/submissions/{sub.pk}/"
    assert client.put(f"/submissions/{sub.pk}/publish/").status_code == 405


@pytest.mark.parametrize("public", [False, True])
@pytest.mark.parametrize("action", ["publish", "withdraw"])
@pytest.mark.parametrize(
    "who, private_code, public_code", [(None, 302, 302), ("bob", 404, 403), ("alice", 302, 302), ("staff", 403, 403)]
)
def test_web_publish_withdraw_permissions(client, catalog, people, who, private_code, public_code, action, public):
    from submissions import intake

    sub = intake.create_kernel_submission(people.team_a, people.alice, "cpu", {"method": "M"}, [("12p.py", kernel())])
    if public:
        sub.publish()
    before = (sub.published_at, sub.withdrawn_at)
    if who:
        client.force_login(getattr(people, who))
    r = client.post(f"/submissions/{sub.pk}/{action}/")
    assert r.status_code == (public_code if public else private_code)
    sub.refresh_from_db()
    if who != "alice":
        assert (sub.published_at, sub.withdrawn_at) == before
        if who is None:
            assert "/accounts/login/" in r["Location"]


def test_trace_format_docs_page_and_schema(client, db):
    html = client.get("/docs/trace-format/").content.decode()
    assert FORMAT in html and 'id="example-trace"' in html and "/schemas/jaxbench-trace-1.json" in html
    example = re.search(r'<pre id="example-trace">(.*?)</pre>', html, re.S).group(1)
    assert example.count("\n") == len(example_trace())
    r = client.get("/schemas/jaxbench-trace-1.json")
    assert r.status_code == 200 and r["Content-Type"].startswith("application/schema+json")
    schema = r.json()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$id"] == "http://testserver/schemas/jaxbench-trace-1.json"
    for obj in example_trace():
        jsonschema.validate(obj, schema)
    r = client.get("/docs/trace-format/example.jsonl")
    assert r.content.decode() == dumps_lines(example_trace())
    assert 'href="/docs/trace-format/"' in client.get("/docs/").content.decode()


def test_team_with_no_members_cannot_be_submitted_for(client, catalog, people):
    Team.objects.create(name="Empty")
    client.force_login(people.alice)
    r = client.post("/submit/", form(team="empty", file_12p=py("a.py", kernel())))
    assert r.status_code == 200 and counts() == (0, 0, 0)


def test_an_unparseable_post_is_400(client, catalog, people):
    """A multipart body without a boundary cannot be parsed at all: 400, nothing stored."""
    client.force_login(people.alice)
    for path in ("/submit/", "/submit/trace/"):
        r = client.post(path, b"garbage", content_type="multipart/form-data")
        assert r.status_code == 400, (path, r.status_code)
    assert counts() == (0, 0, 0)


@pytest.mark.parametrize(
    "body, ctype",
    [
        (
            b"--xyz\r\nContent-Disposition: form-data; name=\"file_12p\"; filename=\"a.py\"\r\n\r\nunterminated",
            "multipart/form-data; boundary=xyz",
        ),
        (b"\xff\xfe=\xff", "application/x-www-form-urlencoded"),
    ],
)
def test_malformed_posts_get_the_form_back_with_its_errors(client, catalog, people, body, ctype):
    """Bodies Django parses leniently (an unterminated file part is dropped, undecodable bytes
    are replaced) arrive as a form with nothing in it: like any invalid form, the page comes
    back (200) with "This field is required." next to the fields, and nothing is stored."""
    client.force_login(people.alice)
    for path in ("/submit/", "/submit/trace/"):
        r = client.post(path, body, content_type=ctype)
        assert r.status_code == 200, (path, r.status_code)
        assert 'class="errorlist"' in r.content.decode()
        assert "This field is required." in r.content.decode()
    assert counts() == (0, 0, 0)


# --- Oversized uploads are refused before their body is read --------------------------------


class LazyMultipart(io.RawIOBase):
    """A multipart/form-data body produced on demand: the form ``fields``, then one file part
    ``name`` of ``size`` bytes of '#'. Counts the bytes anything reads from it, so a test can
    prove that a refused body was never read (and never held in memory)."""

    BOUNDARY = "lazyboundary"

    def __init__(self, fields: dict, name: str, filename: str, size: int, content: bytes = b""):
        super().__init__()
        b = self.BOUNDARY
        head = b"".join(
            f'--{b}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode() for k, v in fields.items()
        )
        head += (
            f'--{b}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
            f"Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        self.content = content or b""
        self.parts = [head, None, f"\r\n--{b}--\r\n".encode()]
        self.fill = size - len(self.content)
        self.length = len(head) + size + len(self.parts[2])
        self.pos = 0
        self.read_bytes = 0

    def readable(self):
        return True

    def _byte_at(self, start: int, n: int) -> bytes:
        head, _, tail = self.parts
        out = bytearray()
        pos = start
        body = len(self.content) + self.fill
        while len(out) < n and pos < self.length:
            if pos < len(head):
                chunk = head[pos : pos + n - len(out)]
            elif pos < len(head) + body:
                off = pos - len(head)
                if off < len(self.content):
                    chunk = self.content[off : off + n - len(out)]
                else:
                    chunk = b"#" * min(n - len(out), body - off)
            else:
                off = pos - len(head) - body
                chunk = tail[off : off + n - len(out)]
            out += chunk
            pos += len(chunk)
        return bytes(out)

    def readinto(self, buf):
        data = self._byte_at(self.pos, len(buf))
        buf[: len(data)] = data
        self.pos += len(data)
        self.read_bytes += len(data)
        return len(data)

    def post(self, client, path):
        stream = io.BufferedReader(self)
        return client.post(
            path,
            **{
                "wsgi.input": stream,
                "CONTENT_LENGTH": str(self.length),
                "CONTENT_TYPE": f"multipart/form-data; boundary={self.BOUNDARY}",
            },
        )


def _csrf_client(user):
    """A client that enforces CSRF like a browser, with its cookie and the form's token."""
    c = Client(enforce_csrf_checks=True)
    c.force_login(user)
    html = c.get("/submit/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    return c, token


@pytest.mark.parametrize("enforce_csrf", [False, True])
def test_a_50_mb_kernel_form_upload_is_refused_before_it_is_read(client, catalog, people, enforce_csrf):
    """The kernel form holds at most a 32 MB zip and a 256 KB file per workload row: a 50 MB
    upload gets the form back (413) with the limit explained above it, nothing is stored, and
    not one byte of the body is read (not by the CSRF middleware either)."""
    from submissions.views.submissions import max_kernel_form_bytes

    if enforce_csrf:
        client, token = _csrf_client(people.alice)
    else:
        client.force_login(people.alice)
        token = ""
    fields = {**form(), "csrfmiddlewaretoken": token}
    body = LazyMultipart(fields, "zip", "huge.zip", 50 * 1024 * 1024)
    assert body.length > max_kernel_form_bytes()
    r = body.post(client, "/submit/")
    assert r.status_code == 413
    assert body.read_bytes == 0
    html = r.content.decode()
    msg = re.search(r'id="kernel-too-large"><li>(.*?)</li>', html, re.S).group(1)
    assert "50.0 MB" in msg and "at most" in msg and "32 MB" in msg and "nothing was stored" in msg
    assert 'id="kernel-form"' in html  # the form is there to try again
    assert counts() == (0, 0, 0)


@pytest.mark.parametrize("enforce_csrf", [False, True])
def test_an_upload_under_the_limit_is_read_and_accepted(client, catalog, people, enforce_csrf):
    """The control for the test above: the same lazily produced body, with a real kernel file
    under the limit, is read (the counter works) and becomes a submission; with CSRF enforced
    and a wrong token it is still refused (403) by the CSRF check that now runs after the size
    check."""
    if enforce_csrf:
        client, token = _csrf_client(people.alice)
        bad = LazyMultipart({**form(), "csrfmiddlewaretoken": "x" * 64}, "file_12p", "12p.py", 0, kernel().encode())
        assert bad.post(client, "/submit/").status_code == 403
        assert counts() == (0, 0, 0)
    else:
        client.force_login(people.alice)
        token = ""
    code = kernel().encode()
    body = LazyMultipart({**form(), "csrfmiddlewaretoken": token}, "file_12p", "12p.py", len(code), code)
    r = body.post(client, "/submit/")
    assert r.status_code == 302, r.content.decode()[:2000]
    assert body.read_bytes >= body.length
    assert Submission.objects.count() == 1


def test_an_oversized_trace_upload_is_refused_before_it_is_read(client, catalog, people, monkeypatch):
    """The trace form: a body over the trace limit (lowered here to 1 MB, so the test does not
    depend on 128 MB) is refused unread with the limit named next to the trace form."""
    from jaxbench import limits

    monkeypatch.setattr(limits, "MAX_TRACE_BYTES", 1024 * 1024)
    client.force_login(people.alice)
    body = LazyMultipart({"team": "team-a", "upload_key": ""}, "trace", "t.jsonl", 3 * 1024 * 1024)
    r = body.post(client, "/submit/trace/")
    assert r.status_code == 413 and body.read_bytes == 0
    msg = re.search(r'id="trace-too-large"><li>(.*?)</li>', r.content.decode(), re.S).group(1)
    assert "a trace is at most 1 MB" in msg and "nothing was stored" in msg
    assert counts() == (0, 0, 0)


def test_anonymous_oversized_post_is_sent_to_log_in_unread(client, catalog):
    body = LazyMultipart(form(), "zip", "huge.zip", 50 * 1024 * 1024)
    r = body.post(client, "/submit/")
    assert r.status_code == 302 and "/accounts/login/" in r["Location"]
    assert body.read_bytes == 0


@pytest.mark.parametrize("path, limit_mb", [("/api/v1/submissions/", 100), ("/api/v1/submissions/trace/", 200)])
def test_the_api_refuses_an_oversized_browser_session_upload_unread(catalog, people, path, limit_mb):
    """The API's own size check comes before authentication: with a browser session (CSRF
    cookie set), SessionAuthentication's CSRF check would otherwise parse the whole body."""
    client, token = _csrf_client(people.alice)
    body = LazyMultipart({**form(), "csrfmiddlewaretoken": token}, "zip", "huge.zip", limit_mb * 1024 * 1024)
    r = body.post(client, path)
    assert r.status_code == 413 and "at most" in r.json()["detail"]
    assert body.read_bytes == 0
    assert counts() == (0, 0, 0)


def _summary(html, summary_id):
    m = re.search(rf'<section class="error-summary" id="{summary_id}".*?</section>', html, re.S)
    assert m, f"no {summary_id} in the page"
    return m.group(0), m.start()


def test_a_failed_kernel_form_has_an_error_summary_on_top_linking_each_field(client, catalog, people):
    client.force_login(people.alice)
    r = client.post(
        "/submit/",
        form(
            method="My method",
            model="My model",
            link="not a url",
            file_12p=py("rms.py", "def workload(x:\n"),
            file_13p=py("13p.py", kernel()),
        ),
    )
    html = r.content.decode()
    summary, at = _summary(html, "kernel-error-summary")
    assert at < html.index('id="kernel-form"')  # above the form, not 1,300 px down
    links = re.findall(r'<a href="#([^"]+)">', summary)
    assert "id_link" in links and all(f'id="{a}"' in html for a in links)
    assert counts() == (0, 0, 0)
    # the intake's per-file errors, once the form itself is valid
    r = client.post(
        "/submit/",
        form(
            method="My method",
            model="My model",
            file_12p=py("rms.py", "def workload(x:\n"),
            file_13p=py("13p.py", kernel()),
        ),
    )
    html = r.content.decode()
    summary, _ = _summary(html, "kernel-error-summary")
    assert 'href="#id_file_12p"' in summary and "not valid Python" in summary
    assert 'id="id_file_12p"' in html
    # chosen metadata kept; the file names to choose again are named
    assert 'value="My method"' in html and 'value="My model"' in html
    assert "rms.py" in summary and "13p.py" in summary
    assert "trace-error-summary" not in html


def test_an_empty_kernel_file_is_named_empty_not_missing(client, catalog, people):
    client.force_login(people.alice)
    r = client.post("/submit/", form(file_12p=py("rms.py", b"")))
    html = r.content.decode()
    summary, _ = _summary(html, "kernel-error-summary")
    assert "empty" in summary and 'href="#id_file_12p"' in summary
    assert "Choose at least one kernel file" not in html


def test_a_failed_trace_upload_has_its_summary_on_top(client, catalog, people):
    client.force_login(people.alice)
    bad = (json.dumps({"format": FORMAT, "method": "m"}) + "\n").encode()
    r = client.post("/submit/trace/", {"team": "team-a", "trace": SimpleUploadedFile("run.jsonl", bad)})
    html = r.content.decode()
    summary, at = _summary(html, "trace-error-summary")
    assert at < html.index('id="kernel-form"') < html.index('id="trace-form"')
    assert 'href="#trace_id_trace"' in summary and 'id="trace_id_trace"' in html
    assert "run.jsonl" in summary
    assert "kernel-error-summary" not in html

"""Test runs (docs/DESIGN.md, "Test runs"): made through the intake, the web form and the API,
evaluated like submissions in the background lane, seen by their owner alone, deleted by the
owner or at expiry, promoted to a submission without uploading again."""

import datetime
import json

import pytest
from django.core.management import call_command
from django.utils import timezone

from evaluator import reconciler
from evaluator.health import running_by_worker
from evaluator.models import Evaluation
from evaluator.review import held_evaluations
from jaxbench import limits
from leaderboard.models import SubmissionSummary
from submissions import intake
from submissions.intake.test_runs import LABEL
from submissions.models import Candidate, Membership, Submission
from tests import factories
from tests.submissions.conftest import counts, kernel


def make_run(people, user=None, team=None, files=None, hardware="cpu"):
    user = user or people.alice
    team = team or people.team_a
    return intake.create_test_run(team, user, hardware, files or [("12p.py", kernel())])


def rows(run):
    return list(Evaluation.objects.filter(candidate__submission_id=run.pk).order_by("pk"))


@pytest.fixture
def teammate(people):
    """carol: alice's teammate in Team A."""
    from django.contrib.auth import get_user_model

    carol = get_user_model().objects.create_user("carol", "carol@example.org", "pw-carol-123")
    Membership.objects.create(team=people.team_a, user=carol, role=Membership.MEMBER)
    return carol


# -- the intake ---------------------------------------------------------------------------------


def test_a_test_run_is_private_expires_and_waits_in_the_background_lane(catalog, people, no_broker):
    before = timezone.now()
    run = make_run(people, files=[("12p.py", kernel()), ("8p_GEMM.py", kernel("gemm"))])
    assert run.test_run and run.created_by == people.alice and run.team == people.team_a
    lifetime = datetime.timedelta(days=limits.TEST_RUN_DAYS)
    assert before + lifetime <= run.expires_at <= timezone.now() + lifetime
    assert not run.is_public and run.method == ""
    assert sorted(run.candidates.values_list("workload__wid", flat=True)) == ["12p", "8p"]
    # the same scheduling as a submission, behind every real one
    assert [(e.stage, e.state, e.lane) for e in rows(run)] == [("main", "queued", "background")] * 2
    # invisible to every query of Submission.objects; only its owner reaches it
    assert not Submission.objects.filter(pk=run.pk).exists()
    assert not Submission.objects.visible_to(people.alice).filter(pk=run.pk).exists()
    assert not Submission.objects.visible_to(people.staff).filter(pk=run.pk).exists()
    assert list(Submission.test_runs.owned_by(people.alice)) == [run]
    for other in (people.bob, people.staff, people.loner):
        assert not Submission.test_runs.owned_by(other).exists()
    with pytest.raises(ValueError, match="never published"):
        Submission.test_runs.get(pk=run.pk).publish()


def test_bad_test_runs_store_nothing(catalog, people):
    too_many = [(f"{w}.py", kernel(w)) for w in ("1p", "8p", "12p", "13p", "18k")] + [("12p_RMSNorm.py", kernel())]
    cases = [
        (dict(files=[("12p.py", "def workload(x:\n")]), "not valid Python"),
        (dict(files=[("77k.py", kernel())]), "unknown workload"),
        (dict(files=[("12p.py", kernel())], hardware="tpu-v99"), "unknown hardware target"),
        (dict(files=too_many), "given twice"),  # six files, one workload twice: every problem named
        (dict(files=[], user=people.bob), "not a member of team"),
    ]
    for kwargs, message in cases:
        with pytest.raises(intake.IntakeError) as exc:
            make_run(people, **kwargs)
        assert message in str(exc.value), (kwargs, exc.value.errors)
    five = [(f"{w}.py", kernel(w)) for w in ("1p", "8p", "12p", "13p", "18k")]
    assert len(five) == limits.TEST_RUN_MAX_KERNELS
    make_run(people, files=five)  # at the limit: accepted
    assert counts() == (0, 5, 5)  # Submission.objects leaves the test run out; its rows are there


def test_more_kernels_than_a_test_run_takes_are_refused(catalog, people, monkeypatch, client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    monkeypatch.setattr("submissions.intake.test_runs.TEST_RUN_MAX_KERNELS", 2)
    three = [(f"{w}.py", kernel(w)) for w in ("1p", "8p", "12p")]
    with pytest.raises(intake.IntakeError, match="3 kernel files; this upload takes at most 2"):
        make_run(people, files=three)
    client.force_login(people.alice)
    resp = client.post(
        "/test-runs/new/",
        {"team": "team-a", "hardware": "cpu", "files": [SimpleUploadedFile(n, c.encode()) for n, c in three]},
    )
    assert resp.status_code == 400 and "this upload takes at most 2" in resp.content.decode()
    assert not Submission.test_runs.exists()


def test_a_person_keeps_at_most_so_many_test_runs(catalog, people):
    for _ in range(limits.TEST_RUN_MAX_LIVE):
        make_run(people)
    with pytest.raises(intake.IntakeError, match="delete one"):
        make_run(people)
    assert Submission.test_runs.count() == limits.TEST_RUN_MAX_LIVE
    # an expired one no longer counts
    Submission.test_runs.filter(pk=Submission.test_runs.first().pk).update(expires_at=timezone.now())
    make_run(people)


def test_expired_test_runs_are_deleted_by_the_reconciler_and_the_command(catalog, people, capsys):
    keep, old, older = make_run(people), make_run(people), make_run(people)
    gone = [old.pk, older.pk]
    Submission.test_runs.filter(pk__in=gone).update(expires_at=timezone.now() - datetime.timedelta(seconds=1))
    assert Submission.test_runs.expired().count() == 2
    assert not Submission.test_runs.owned_by(people.alice).filter(pk__in=gone).exists()  # pages stop at once
    reconciler.reconcile()
    assert list(Submission.test_runs.values_list("pk", flat=True)) == [keep.pk]
    assert not Candidate.objects.filter(submission_id__in=gone).exists()
    assert not Evaluation.objects.filter(candidate__submission_id__in=gone).exists()
    Submission.test_runs.filter(pk=keep.pk).update(expires_at=timezone.now())
    call_command("expire_test_runs")
    assert "1 expired test run deleted" in capsys.readouterr().out
    assert not Submission.test_runs.exists() and counts() == (0, 0, 0)


# -- verdicts, reuse, review, deletion while running ----------------------------------------------


def test_a_test_runs_verdict_is_never_a_precedent_but_it_may_use_one(catalog, people, no_broker):
    run = make_run(people)
    (row,) = rows(run)
    factories.judge(row.pk, factories.judged_record(outcome="correct_faster", speedup=1.6))
    row.refresh_from_db()
    assert row.outcome == "correct_faster" and row.lane == "background"
    # its aggregates are folded like a submission's (the preview reads them)
    assert SubmissionSummary.objects.get(submission_id=run.pk, source="evaluated").complete
    # identical code in a real submission is measured, not copied from a private, expiring trial
    sub = intake.create_kernel_submission(people.team_a, people.alice, "cpu", {"method": "M"}, [("12p.py", kernel())])
    (real,) = Evaluation.objects.filter(candidate__submission=sub)
    assert real.state == Evaluation.QUEUED and real.reused_from_id is None
    factories.judge(real.pk, factories.judged_record(outcome="correct_slower", speedup=0.9))
    # a test run of code already judged in a submission takes that verdict at once
    again = make_run(people)
    (copy,) = rows(again)
    assert copy.state == Evaluation.DONE and copy.reused_from_id == real.pk and copy.outcome == "correct_slower"


def test_held_results_of_a_test_run_wait_for_its_promotion(catalog, people, no_broker):
    run = make_run(people)
    (row,) = rows(run)
    factories.judge(
        row.pk, factories.judged_record(outcome="correct_faster", speedup=12.0, held_for_review=True, notes=["held"])
    )
    assert Evaluation.objects.get(pk=row.pk).review == Evaluation.HELD
    assert row.pk not in [e.pk for e in held_evaluations()]  # a private trial is no staff work
    intake.promote_test_run(run, people.alice, {"method": "Hand-written"})
    assert row.pk in [e.pk for e in held_evaluations()]


def test_a_worker_drops_the_verdict_of_a_test_run_deleted_while_it_ran(catalog, people):
    from evaluator import runner

    run = make_run(people)
    (row,) = rows(run)
    claimed = runner.claim(row.pk, "w1")
    assert claimed is not None
    intake.delete_test_run(run)
    runner.finish(claimed, factories.judged_record(), Evaluation.DONE)  # no error, nothing stored
    assert not Evaluation.objects.filter(pk=row.pk).exists() and not SubmissionSummary.objects.exists()


def test_health_says_a_test_run_runs_never_which(catalog, people):
    from evaluator import runner

    run = make_run(people)
    (row,) = rows(run)
    runner.claim(row.pk, "host:1:thread")
    (entry,) = [r for rs in running_by_worker().values() for r in rs]
    assert entry["test_run"] is True
    assert entry["submission"] is None and entry["workload"] is None and entry["evaluation"] is None


# -- promotion ---------------------------------------------------------------------------------


def test_promotion_keeps_the_kernels_and_verdicts_and_moves_the_rest_ahead(
    catalog, people, no_broker, django_capture_on_commit_callbacks
):
    run = make_run(people, files=[("12p.py", kernel()), ("8p.py", kernel("gemm"))])
    judged, waiting = rows(run)
    factories.judge(judged.pk, factories.judged_record(outcome="correct_faster", speedup=1.4))
    with pytest.raises(intake.IntakeError, match="name the method"):
        intake.promote_test_run(run, people.alice, {"method": " "})
    with pytest.raises(intake.IntakeError, match="no longer exists"):
        intake.promote_test_run(run, people.bob, {"method": "M"})  # not bob's
    assert Submission.test_runs.filter(pk=run.pk).exists()
    no_broker.clear()
    with django_capture_on_commit_callbacks(execute=True):
        sub = intake.promote_test_run(
            run, people.alice, {"method": "Hand-written", "model": "Human", "selection": "single_attempt"}
        )
    assert sub.pk == run.pk and not sub.test_run and sub.expires_at is None and not sub.is_public
    assert (sub.method, sub.model_name, sub.selection) == ("Hand-written", "Human", "single_attempt")
    assert Submission.objects.visible_to(people.alice).filter(pk=sub.pk).exists()  # the team's now
    after = {e.pk: e for e in rows(sub)}
    assert set(after) == {judged.pk, waiting.pk}  # the same rows: nothing measured again
    assert after[judged.pk].outcome == "correct_faster" and after[judged.pk].lane == "background"
    assert after[waiting.pk].lane == "user" and after[waiting.pk].state == Evaluation.QUEUED
    assert no_broker == [([waiting.pk], "eval.cpu")]
    # published at once when asked
    other = make_run(people)
    assert intake.promote_test_run(other, people.alice, {"method": "M"}, publish=True).is_public


# -- the web -----------------------------------------------------------------------------------


def test_the_web_form_makes_a_test_run_only_its_owner_sees(client, catalog, people, teammate):
    from django.core.files.uploadedfile import SimpleUploadedFile

    assert client.get("/test-runs/new/").status_code == 302  # log in first
    client.force_login(people.alice)
    page = client.get("/test-runs/new/")
    assert page.status_code == 200 and LABEL in page.content.decode()
    resp = client.post(
        "/test-runs/new/",
        {
            "team": "team-a",
            "hardware": "cpu",
            "workload": "12p",
            "files": [SimpleUploadedFile("my_kernel.py", kernel().encode())],
        },
    )
    run = Submission.test_runs.get()
    assert resp.status_code == 302 and resp["Location"] == f"/test-runs/{run.pk}/"
    assert run.candidates.get().workload.wid == "12p" and run.candidates.get().filename == "my_kernel.py"
    html = client.get(f"/test-runs/{run.pk}/").content.decode()
    assert LABEL in html and "Submit for the board" in html and 'id="test-run-verdicts"' in html
    assert "Test run" in client.get("/test-runs/").content.decode()
    # nobody else: not a teammate, not staff, not another team
    for other in (teammate, people.staff, people.bob):
        client.force_login(other)
        for url in (f"/test-runs/{run.pk}/", f"/test-runs/{run.pk}/promote/", f"/submissions/{run.pk}/"):
            assert client.get(url).status_code == 404, (other, url)
        assert client.post(f"/test-runs/{run.pk}/delete/").status_code == 404
        assert f"#{run.pk}" not in client.get("/test-runs/").content.decode()
        assert f"/submissions/{run.pk}/" not in client.get("/submissions/").content.decode()
    client.logout()
    assert client.get(f"/test-runs/{run.pk}/").status_code == 302
    assert Submission.test_runs.filter(pk=run.pk).exists()


def test_the_web_form_says_what_is_wrong_and_stores_nothing(client, catalog, people):
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(people.alice)

    def post(files, **extra):
        data = {"team": "team-a", "hardware": "cpu", "files": files, **extra}
        return client.post("/test-runs/new/", data)

    cases = [
        ([], {}, "This field is required"),
        ([SimpleUploadedFile("12p.py", b"def workload(x:\n")], {}, "not valid Python"),
        (
            [SimpleUploadedFile(f"{w}.py", kernel(w).encode()) for w in ("1p", "8p")],
            {"workload": "12p"},
            "name the workload only for a single file",
        ),
    ]
    for files, extra, message in cases:
        resp = post(files, **extra)
        html = resp.content.decode()
        assert resp.status_code == 400, html[:2000]
        assert "nothing was stored" in html and message in html
    assert not Submission.test_runs.exists()


def test_delete_and_promote_on_the_web(client, catalog, people):
    run = make_run(people)
    client.force_login(people.alice)
    assert client.get(f"/test-runs/{run.pk}/delete/").status_code == 302  # a GET changes nothing
    assert Submission.test_runs.filter(pk=run.pk).exists()
    page = client.get(f"/test-runs/{run.pk}/promote/")
    assert page.status_code == 200 and 'id="promote-form"' in page.content.decode()
    bad = client.post(f"/test-runs/{run.pk}/promote/", {"method": ""})
    assert bad.status_code == 400 and "nothing was stored" in bad.content.decode()
    assert Submission.test_runs.filter(pk=run.pk).exists()
    ok = client.post(f"/test-runs/{run.pk}/promote/", {"method": "Hand-written", "publish": "on"})
    assert ok.status_code == 302 and ok["Location"] == f"/submissions/{run.pk}/"
    assert Submission.objects.public().filter(pk=run.pk).exists()
    other = make_run(people)
    resp = client.post(f"/test-runs/{other.pk}/delete/")
    assert resp.status_code == 302 and resp["Location"] == "/test-runs/"
    assert not Submission.test_runs.filter(pk=other.pk).exists() and not Candidate.objects.filter(
        submission_id=other.pk
    )


# -- the API -----------------------------------------------------------------------------------


def test_the_api_makes_polls_promotes_and_deletes_test_runs(api, client, catalog, people, no_broker):
    alice, bob = api(people.tokens["alice"]), api(people.tokens["bob"])

    def delete(path, who):
        return client.delete(path, HTTP_AUTHORIZATION=f"Bearer {people.tokens[who]}").status_code

    assert api().post("/api/v1/test-runs/", {}, content_type="application/json").status_code == 401
    resp = alice.post(
        "/api/v1/test-runs/", json.dumps({"hardware": "cpu", "kernels": {"12p": kernel()}}), "application/json"
    )
    assert resp.status_code == 201, resp.content
    body = resp.json()
    rid = body["id"]
    assert body["label"] == LABEL and body["team"] == "team-a" and body["kernels"] == 1
    assert resp["Location"].endswith(f"/api/v1/test-runs/{rid}/")
    assert body["status"]["finished"] is False and body["preview"] is None
    assert [(v["workload"], v["state"], v["finished"]) for v in body["verdicts"]] == [("12p", "queued", False)]
    assert [r["id"] for r in alice.get("/api/v1/test-runs/").json()] == [rid]
    # never among the submissions, to anyone
    assert rid not in [s["id"] for s in alice.get("/api/v1/submissions/").json()["results"]]
    assert alice.get(f"/api/v1/submissions/{rid}/").status_code == 404
    # a verdict, then its run log
    (row,) = Evaluation.objects.filter(candidate__submission_id=rid)
    factories.judge(row.pk, factories.judged_record(outcome="incorrect", speedup=None, message="max error 3.2"))
    body = alice.get(f"/api/v1/test-runs/{rid}/").json()
    (v,) = body["verdicts"]
    assert v["finished"] and v["outcome"] == "incorrect" and v["message"] == "max error 3.2"
    assert body["status"]["finished"] and body["state"]["state"] == "failed"
    assert body["preview"] is not None and body["preview"]["rank"] == 1  # an empty board: the only row
    log = alice.get(v["log"].replace("http://testserver", ""))
    assert log.status_code == 200 and log.json()["evaluation"] == row.pk
    # bob sees nothing of it
    assert bob.get(f"/api/v1/test-runs/{rid}/").status_code == 404
    assert bob.get(f"/api/v1/test-runs/{rid}/evaluations/{row.pk}/log/").status_code == 404
    assert bob.get(f"/api/v1/evaluations/{row.pk}/log/").status_code == 404
    assert bob.get("/api/v1/test-runs/").json() == []
    assert bob.post(f"/api/v1/test-runs/{rid}/promote/", {"method": "M"}).status_code == 404
    assert delete(f"/api/v1/test-runs/{rid}/", "bob") == 404
    # bad input: a clear 400, nothing changed
    bad = alice.post(f"/api/v1/test-runs/{rid}/promote/", json.dumps({"model": "x"}), "application/json")
    assert bad.status_code == 400 and any(e["field"] == "method" for e in bad.json()["errors"])
    sub = alice.post(f"/api/v1/test-runs/{rid}/promote/", json.dumps({"method": "Hand-written"}), "application/json")
    assert sub.status_code == 200 and sub.json()["id"] == rid and sub.json()["is_public"] is False
    assert alice.get(f"/api/v1/test-runs/{rid}/").status_code == 404  # a submission now
    assert alice.get(f"/api/v1/submissions/{rid}/").status_code == 200
    # delete
    other = alice.post(
        "/api/v1/test-runs/", json.dumps({"hardware": "cpu", "kernels": {"8p": kernel()}}), "application/json"
    ).json()["id"]
    assert delete(f"/api/v1/test-runs/{other}/", "alice") == 204
    assert not Submission.test_runs.filter(pk=other).exists()


def test_the_api_refuses_bad_test_runs_clearly(api, catalog, people):
    alice = api(people.tokens["alice"])

    def create(body):
        return alice.post("/api/v1/test-runs/", json.dumps(body), "application/json")

    too_many = {w: kernel(w) for w in ("1p", "8p", "12p", "13p", "18k")} | {"12p_RMSNorm": kernel()}
    for body, field in [
        ({"kernels": {"12p": kernel()}}, "hardware"),
        ({"hardware": "cpu"}, "files"),
        ({"hardware": "cpu", "kernels": {"12p": "def workload(x:\n"}}, "syntax"),
        ({"hardware": "cpu", "kernels": too_many}, "name"),
        ({"hardware": "cpu", "kernels": {"12p": kernel()}, "team": "team-b"}, "team"),
    ]:
        resp = create(body)
        assert resp.status_code == 400, (body, resp.content)
        assert "nothing was stored" in resp.json()["detail"] and any(e["field"] == field for e in resp.json()["errors"])
    # multipart: a workload for each file, in their order
    from django.core.files.uploadedfile import SimpleUploadedFile

    def files():
        return [SimpleUploadedFile("a.py", kernel().encode()), SimpleUploadedFile("b.py", kernel("b").encode())]

    resp = alice.post("/api/v1/test-runs/", {"hardware": "cpu", "files": files(), "workloads": ["12p"]})
    assert resp.status_code == 400 and resp.json()["errors"][0]["field"] == "workloads"
    assert not Submission.test_runs.exists()
    resp = alice.post("/api/v1/test-runs/", {"hardware": "cpu", "files": files(), "workloads": ["12p", "8p"]})
    assert resp.status_code == 201, resp.content
    assert [(v["workload"], v["filename"]) for v in resp.json()["verdicts"]] == [("8p", "b.py"), ("12p", "a.py")]

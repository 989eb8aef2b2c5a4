"""Level 2's twins on the pages: a board of a later level ranks only the submissions that
attempted it and says what its speedups are over; the workload page names the Pallas baseline;
the workloads list says where a TPU-only workload is not measured."""

import pytest
from django.core.cache import cache
from django.utils import timezone

from evaluator import pipeline, runner
from evaluator.models import Evaluation
from submissions import intake
from submissions.models import Submission
from tests import factories

pytestmark = pytest.mark.django_db
CODE = "def workload(a, b):\n    return a @ b\n"


@pytest.fixture
def board(monkeypatch):
    monkeypatch.setattr(pipeline, "enqueue_many", lambda ids, queue: None)
    factories.hardware()
    for wid in ("12p", "l2-7p", "l2-8p"):
        factories.workload(wid)
    user, team = factories.member()
    one = intake.create_kernel_submission(team, user, "cpu", {"method": "level-one only"}, [("12p.py", CODE)])
    two = intake.create_kernel_submission(
        team, user, "cpu", {"method": "on level two", "upload_key": "b"}, [("l2-8p-gemm.py", CODE)]
    )
    record = factories.judged_record("correct_slower", 0.5)
    for sub in (one, two):
        for ev in Evaluation.objects.filter(candidate__submission=sub):
            runner.finish(runner.claim(ev.pk, "w"), dict(record, baseline_program="pallas"), Evaluation.DONE)
    Submission.objects.filter(pk__in=[one.pk, two.pk]).update(published_at=timezone.now())
    return one, two


def test_a_later_level_s_board_ranks_who_attempted_it_over_its_baselines(client, board):
    one, two = board
    page = client.get("/leaderboard/?hardware=cpu&set=level2").content.decode()
    # the method menu lists every method of the board; the table only the ranked row
    table = page[page.index('<table id="leaderboard"') :]
    assert "on level two" in table and "level-one only" not in table
    assert "speedup over each workload's baseline (a hand-tuned Pallas kernel" in page
    assert "faster than p× the baseline" in page and "each workload&#x27;s baseline (its Pallas kernel, or XLA)" in page
    cache.clear()  # the board renders once per data stamp: a fresh render carries its context
    data = client.get("/leaderboard/?hardware=cpu&set=level2").context["data"]
    assert data["meta"]["baseline"] == "the baseline" and [r["submission"] for r in data["rows"]] == [two.pk]
    # level 1's board is unchanged: every submission, over XLA
    first = client.get("/leaderboard/?hardware=cpu").content.decode()
    assert "level-one only" in first and "on level two" in first and "speedup over XLA on" in first


def test_the_workload_page_and_the_list_name_the_baseline_and_where_it_runs(client, board):
    page = client.get("/workloads/l2-8p-gemm/").content.decode()
    assert "Timed against: <strong>a hand-tuned Pallas kernel</strong>" in page
    assert "Pallas baseline (alone)" in page and "XLA baseline (alone)" not in page
    assert "cpu, tpu only" in page and "no GPU lowering" in page
    listing = client.get("/workloads/?set=level2&hardware=cpu").content.decode()
    assert "speedup over the baseline" in listing
    assert "not measured on cpu: tpu only" in listing  # l2-7p: JAX's interpreter cannot run its kernel
    assert client.get("/workloads/12p-rmsnorm/").content.decode().count("Timed against: <strong>XLA</strong>") == 1


def test_the_upstream_section_says_how_each_public_file_was_checked(client, board):
    twin = client.get("/workloads/l2-8p-gemm/").content.decode()
    assert "Run here: the public file, its TUNED_PARAMS set to the small profile" in twin
    # a stored copy without its history: the page does not claim the commit is the newest change
    assert "whether a later change exists was not checked here" in twin
    assert "the newest change to that file we match" not in twin
    on_tpu = client.get("/workloads/l2-7p-ragged-paged-attention/").content.decode()
    assert '<span id="conformance">Run here on a TPU v5e: the public file, its TUNED_PARAMS set' in on_tpu
    assert "comes back correct here" not in on_tpu  # the claim level 1's pages make is not made for it
    level_one = client.get("/workloads/12p-rmsnorm/").content.decode()
    assert "uploaded unchanged as a candidate, comes back correct here" in level_one
    assert "the newest change to that file we match" in level_one  # dated: read from its history


def test_a_workload_without_per_profile_values_shows_no_empty_parameters_table(client, board):
    factories.workload("64p")
    page = client.get("/workloads/64p-linear-softmax-cross-entropy/").content.decode()
    assert "6 configurations" in page and 'id="parameters"' not in page
    assert 'id="parameters"' in client.get("/workloads/l2-8p-gemm/").content.decode()


def test_the_level_s_tab_lists_its_public_tasks_not_here_with_why(client, board):
    listing = client.get("/workloads/?set=level2&hardware=cpu").content.decode()
    # two level-2 workloads in this catalogue, and the 14 public tasks not registered at all
    assert "The public suite's level 2 has 16 tasks; 2 are measured here (above). These 14 are not" in listing
    table = listing.split('id="not-here-tasks"')[1]
    assert table.count("<tr>") == 15  # the header and the 14
    assert "<code>57p_SparseCore_Ragged_Gather</code></td><td>a SparseCore kernel" in table
    assert "<code>3p_MLA_Attention</code></td><td>its baseline is tpu-inference" in table
    assert 'id="not-here-tasks"' not in client.get("/workloads/?set=all&hardware=cpu").content.decode()


def test_the_api_says_each_workload_s_level_baseline_and_platforms(client, board):
    listed = client.get("/api/v1/workloads/", {"level": 2}).json()["results"]
    assert [(w["id"], w["level"], w["baseline_program"], w["platforms"]) for w in listed] == [
        ("l2-7p", 2, "pallas", ["tpu"]),
        ("l2-8p", 2, "pallas", ["cpu", "tpu"]),
    ]
    one = client.get("/api/v1/workloads/12p/").json()
    assert (one["level"], one["baseline_program"], one["platforms"], one["platform_note"]) == (
        1,
        "xla",
        ["cpu", "tpu", "gpu"],
        "",
    )
    assert "no GPU lowering" in client.get("/api/v1/workloads/l2-8p-gemm/").json()["platform_note"]


def test_default_orderings_keep_a_later_level_after_the_first(board):
    # a level-2 twin shares its level-1 task's number: by number alone l2-7p sorted before 12p
    from catalog.models import Baseline
    from leaderboard.models import WorkloadResult
    from submissions.models import Candidate

    cpu = factories.hardware()
    for wid in ("l2-8p", "12p", "l2-7p"):
        Baseline.objects.create(
            workload=factories.workload(wid),
            hardware=cpu,
            profile="small",
            jax_version="j",
            harness_version="h",
            median_s=1.0,
        )
    assert [b.workload.wid for b in Baseline.objects.all()] == ["12p", "l2-7p", "l2-8p"]
    user, team = factories.member()
    files = [("l2-8p-gemm.py", CODE), ("12p.py", CODE)]
    both = intake.create_kernel_submission(team, user, "cpu", {"method": "both levels", "upload_key": "c"}, files)
    assert [c.workload.wid for c in Candidate.objects.filter(submission=both)] == ["12p", "l2-8p"]
    rows = WorkloadResult.objects.filter(summary__submission__in=board).select_related("workload")
    wids = [r.workload.wid for r in rows]
    assert wids and wids == sorted(wids, key=lambda w: (w.startswith("l2-"), w))

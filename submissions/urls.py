"""Submitting (form and trace upload), test runs (make, delete, promote), publish/withdraw, the
trace format's docs and schema, and the team pages. The pages that show a submission's (or a test
run's) results belong to the leaderboard app."""

from django.urls import path

from submissions.views import submissions, teams, test_runs

app_name = "submissions"
urlpatterns = [
    path("submit/", submissions.submit, name="submit"),
    path("submit/trace/", submissions.submit_trace, name="submit-trace"),
    path("submissions/<int:pk>/publish/", submissions.submission_publish, name="submission-publish"),
    path("submissions/<int:pk>/withdraw/", submissions.submission_withdraw, name="submission-withdraw"),
    # test runs (private evaluations): their pages are the leaderboard app's
    path("test-runs/new/", test_runs.test_run_new, name="test-run-new"),
    path("test-runs/<int:pk>/delete/", test_runs.test_run_delete, name="test-run-delete"),
    path("test-runs/<int:pk>/promote/", test_runs.test_run_promote, name="test-run-promote"),
    path("docs/trace-format/", submissions.trace_format_docs, name="trace-format"),
    path("docs/trace-format/example.jsonl", submissions.trace_example, name="trace-example"),
    path("schemas/jaxbench-trace-1.json", submissions.trace_schema, name="trace-schema"),
    path("teams/new/", teams.team_create, name="team-create"),
    path("teams/join/", teams.team_join, name="team-join"),
    path("teams/join/<str:code>/", teams.team_join, name="team-join-code"),
    path("teams/<slug:slug>/", teams.team_detail, name="team-detail"),
    path("teams/<slug:slug>/leave/", teams.team_leave, name="team-leave"),
    path("teams/<slug:slug>/rotate-code/", teams.team_rotate_code, name="team-rotate-code"),
    path("teams/<slug:slug>/members/<int:user_id>/remove/", teams.team_remove_member, name="team-remove-member"),
    path("teams/<slug:slug>/members/<int:user_id>/make-owner/", teams.team_make_owner, name="team-make-owner"),
]

"""Submitting, the own teams' submissions, publish/withdraw, and the trace format's docs and
schema. The submission detail page (``submission-detail``) belongs to the leaderboard app."""
from django.urls import path

from portal.views import submissions

urlpatterns = [
    path("submit/", submissions.submit, name="submit"),
    path("submit/trace/", submissions.submit_trace, name="submit-trace"),
    path("submissions/", submissions.submission_list, name="submission-list"),
    path("submissions/<int:pk>/publish/", submissions.submission_publish, name="submission-publish"),
    path("submissions/<int:pk>/withdraw/", submissions.submission_withdraw, name="submission-withdraw"),
    path("docs/trace-format/", submissions.trace_format_docs, name="trace-format"),
    path("docs/trace-format/example.jsonl", submissions.trace_example, name="trace-example"),
    path("schemas/jaxbench-trace-1.json", submissions.trace_schema, name="trace-schema"),
]

"""django-filter filter sets of the v1 API. Workloads are named by ID, slug or public folder name
everywhere (as in uploads)."""

import django_filters
from django.db.models import Q

from catalog.lookup import workload_catalog
from catalog.models import Baseline, ExpertReference, Workload
from evaluator.models import Evaluation
from jaxbench.verdict.review import HELD_OUTCOME
from submissions.models import Submission


def workload_ids(value: str) -> list[str]:
    """Comma-separated workload names -> IDs (unknown names match nothing)."""
    catalog = workload_catalog()
    return [catalog.resolve(v) or f"?{v}" for v in value.split(",") if v.strip()]


class WorkloadNameFilter(django_filters.CharFilter):
    def __init__(self, *args, path="workload__wid", **kwargs):
        kwargs.setdefault("help_text", "Workload ID, slug or public folder name; several separated by commas.")
        super().__init__(*args, **kwargs)
        self.path = path

    def filter(self, qs, value):
        if not value:
            return qs
        return qs.filter(**{f"{self.path}__in": workload_ids(value)})


class WorkloadFilter(django_filters.FilterSet):
    class Meta:
        model = Workload
        fields = ["source", "category", "expert", "model", "level"]


class BaselineFilter(django_filters.FilterSet):
    hardware = django_filters.CharFilter(field_name="hardware__slug", help_text="Hardware target slug.")
    workload = WorkloadNameFilter()

    class Meta:
        model = Baseline
        fields = ["hardware", "workload", "profile", "jax_version", "harness_version"]


class ExpertFilter(django_filters.FilterSet):
    hardware = django_filters.CharFilter(field_name="hardware__slug", help_text="Hardware target slug.")
    workload = WorkloadNameFilter()

    class Meta:
        model = ExpertReference
        fields = ["hardware", "workload", "outcome"]


class SubmissionFilter(django_filters.FilterSet):
    team = django_filters.CharFilter(field_name="team__slug", help_text="Team slug.")
    hardware = django_filters.CharFilter(field_name="hardware__slug", help_text="Hardware target slug.")
    kind = django_filters.ChoiceFilter(choices=Submission.KINDS)
    published = django_filters.BooleanFilter(method="filter_published", help_text="true: published and not withdrawn.")

    class Meta:
        model = Submission
        fields = ["team", "hardware", "kind", "published"]

    def filter_published(self, qs, name, value):
        q = Q(published_at__isnull=False, withdrawn_at__isnull=True)
        return qs.filter(q) if value else qs.exclude(q)


class EvaluationFilter(django_filters.FilterSet):
    workload = WorkloadNameFilter(path="candidate__workload__wid")
    outcome = django_filters.MultipleChoiceFilter(
        choices=[(o, o) for o in (*Evaluation.OUTCOMES, HELD_OUTCOME)], method="filter_outcome"
    )
    state = django_filters.MultipleChoiceFilter(choices=Evaluation.STATES)
    stage = django_filters.ChoiceFilter(choices=Evaluation.STAGES)

    class Meta:
        model = Evaluation
        fields = ["workload", "outcome", "state", "stage"]

    def filter_outcome(self, qs, name, value):
        """The outcome as the API shows it: a held row is ``held_for_review``, never its
        measured outcome (TRUST.md 6)."""
        if not value:
            return qs
        q = Q(outcome__in=[v for v in value if v != HELD_OUTCOME]) & ~Q(review=Evaluation.HELD)
        if HELD_OUTCOME in value:
            q |= Q(review=Evaluation.HELD)
        return qs.filter(q)

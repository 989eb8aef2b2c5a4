"""Fixtures of the security tests: a small workload catalogue (rows created directly, no JAX
import), a user in a team with a real API token, and no broker (enqueueing is recorded)."""

import pytest

from tests.submissions.conftest import WORKLOADS


@pytest.fixture(autouse=True)
def no_broker(monkeypatch):
    """Evaluations are created for real; the wake-up messages are recorded, not sent (also after
    a real commit under ``django_db(transaction=True)``)."""
    sent = []
    monkeypatch.setattr("evaluator.pipeline.enqueue_many", lambda ids, queue: sent.append((list(ids), queue)))
    return sent


@pytest.fixture(autouse=True)
def fresh_cache():
    """Throttle counters live in the cache: every test starts from zero."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


def make_catalog():
    from catalog.models import Workload
    from catalog.registry_sync import sync_hardware

    sync_hardware()
    for wid, slug, public, title, source, category in WORKLOADS:
        Workload.objects.get_or_create(
            wid=wid,
            defaults=dict(
                number=int(wid[:-1]),
                slug=slug,
                public_name=public,
                title=title,
                source=source,
                model="Llama" if source == "maxtext" else "KernelBench L2",
                category=category,
                atol=1e-2,
                rtol=1e-2,
                input_names=["x"],
                profiles={"small": {"n": 8}},
                shapes={"small": {"inputs": []}},
                costs={"small": {"flops": 8, "bytes": 32}},
                reference_source="def reference(x):\n    return x\n",
            ),
        )


class Member:
    """A user in one team with an API token (the raw value, as a client holds it)."""

    def __init__(self, username="mallory", team_name="Red Team"):
        from django.contrib.auth import get_user_model

        from submissions.models import ApiToken, Membership, Team

        self.user = get_user_model().objects.create_user(username, f"{username}@example.org", "pw-long-enough-1")
        self.team = Team.objects.create(name=team_name)
        Membership.objects.create(team=self.team, user=self.user, role=Membership.OWNER)
        self.token = ApiToken.issue(self.user, "security tests")[1]
        self.auth = {"HTTP_AUTHORIZATION": f"Bearer {self.token}"}


@pytest.fixture
def catalog(db):
    make_catalog()


@pytest.fixture
def member(db):
    return Member()


def counts():
    """Rows of every table an upload writes."""
    from evaluator.models import Evaluation
    from submissions.models import Candidate, Submission

    return Submission.objects.count(), Candidate.objects.count(), Evaluation.objects.count()

"""Fuzz every operation of the OpenAPI schema (/api/schema/) with schemathesis, in process against
the WSGI application: anonymously and with a real Bearer token of a user in a team.

Checks: no 5xx (``not_a_server_error``) and no Python stack trace in any response body. Cases
that fit the schema and cases that do not (schemathesis' positive and negative modes) are both
sent. Bounded and deterministic: a fixed number of examples per operation and mode, with
Hypothesis derandomized and without its example database; failures are collected over all
operations and reported together, each with a curl command that reproduces it."""

import collections

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error

from jaxbench import environment
from tests.portal.security.conftest import Member, make_catalog

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Examples per operation, generation mode and known path: both tests together take ~40 s on two
# cores. JAXBENCH_FUZZ_EXAMPLES raises it for a deeper local run (JAXBENCH_FUZZ_STATS=1 prints
# the status codes seen per operation).
MAX_EXAMPLES = environment.get("JAXBENCH_FUZZ_EXAMPLES")
TRACE_MARKERS = ("Traceback (most recent call last)", 'File "/')


def no_stack_trace(ctx, response, case):
    body = response.content or b""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)
    for marker in TRACE_MARKERS:
        if marker in text:
            raise AssertionError(f"the response body holds a Python stack trace ({marker!r}): {text[:500]}")
    return None


CHECKS = [not_a_server_error, no_stack_trace]


@pytest.fixture
def fuzz_world(monkeypatch):
    """Rows for the fuzzer to find: workloads, hardware, a member with a token, his private
    submission and another team's published one (with evaluations), a baseline and an expert
    reference. Throttling is off: 429s would only hide the code under test."""
    from rest_framework import throttling

    from catalog.models import Baseline, ExpertReference, HardwareTarget, Workload
    from submissions import intake
    from tests.submissions.conftest import kernel

    monkeypatch.setattr(throttling.SimpleRateThrottle, "allow_request", lambda self, request, view: True)
    make_catalog()
    m = Member()
    other = Member("eve", "Blue Team")
    private = intake.create_kernel_submission(m.team, m.user, "cpu", {"method": "Fuzz"}, [("12p.py", kernel())])
    public = intake.create_kernel_submission(
        other.team, other.user, "cpu", {"method": "Pub"}, [("8p.py", kernel()), ("12p.py", kernel())]
    )
    public.publish()
    cpu, w = HardwareTarget.objects.get(slug="cpu"), Workload.objects.get(wid="12p")
    baseline = Baseline.objects.create(
        workload=w, hardware=cpu, profile="small", jax_version="0.10.2", harness_version="1.0.0", median_s=1e-3
    )
    expert = ExpertReference.objects.create(workload=w, hardware=cpu, implementation="tokamax", speedup=2.0)
    return {"member": m, "private": private.pk, "public": public.pk, "baseline": baseline.pk, "expert": expert.pk}


def load_schema():
    from portal.wsgi import application

    return schemathesis.openapi.from_wsgi("/api/schema/", application)


STATS: dict = collections.defaultdict(collections.Counter)


def known_paths(label: str, world: dict) -> list[dict]:
    """Path parameters that name real rows, so that the fuzzed query strings and bodies also reach
    the code behind a found object (random ids almost never do)."""
    if "/submissions/{id}/" in label or "/leaderboard/submissions/{id}/" in label:
        return [{"id": world["private"]}, {"id": world["public"]}]
    if "/workloads/{id}/" in label:
        return [{"id": "12p_RMSNorm"}]
    if "/hardware/{slug}/" in label:
        return [{"slug": "cpu"}]
    if "/baselines/{id}/" in label:
        return [{"id": world["baseline"]}]
    if "/experts/{id}/" in label:
        return [{"id": world["expert"]}]
    return []


def fuzz(schema, headers, world) -> list[str]:
    failures: list[str] = []
    ops = [r.ok() for r in schema.get_all_operations()]
    assert len(ops) >= 15, [op.label for op in ops]
    for op in ops:
        variants = [(mode, None) for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)]
        variants += [
            (mode, path)
            for path in known_paths(op.label, world)
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
        ]
        for mode, path in variants:

            @settings(
                max_examples=MAX_EXAMPLES,
                derandomize=True,
                database=None,
                deadline=None,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @given(case=op.as_strategy(generation_mode=mode, path_parameters=path))
            def run(case):
                response = case.call(headers=headers)
                STATS[op.label][response.status_code] += 1
                case.validate_response(response, checks=CHECKS, headers=headers)

            try:
                run()
            except Unsatisfiable:
                # No request can break the schema of this operation (e.g. a lone free-form
                # string path parameter): there is nothing negative to send.
                assert mode is GenerationMode.NEGATIVE, op.label
            except Exception as exc:  # collect all, report together
                failures.append(f"{op.label} [{mode.value}{f' {path}' if path else ''}]: {str(exc)[:1500]}")
    return failures


def test_fuzz_api_anonymously(fuzz_world):
    STATS.clear()
    failures = fuzz(load_schema(), headers={}, world=fuzz_world)
    if environment.get("JAXBENCH_FUZZ_STATS"):
        print({k: dict(v) for k, v in STATS.items()})
    assert not failures, "\n\n".join(failures)
    assert set(STATS["GET /api/v1/me/"]) == {401} and set(STATS["POST /api/v1/submissions/"]) == {401}


def test_fuzz_api_with_a_bearer_token(fuzz_world):
    member = fuzz_world["member"]
    from django.test import Client

    assert Client().get("/api/v1/me/", HTTP_AUTHORIZATION=f"Bearer {member.token}").json()["username"] == "mallory"
    STATS.clear()
    failures = fuzz(load_schema(), headers={"Authorization": f"Bearer {member.token}"}, world=fuzz_world)
    if environment.get("JAXBENCH_FUZZ_STATS"):
        print({k: dict(v) for k, v in STATS.items()})
    assert not failures, "\n\n".join(failures)
    assert set(STATS["GET /api/v1/me/"]) == {200}  # every case went out as the member
    assert 200 in STATS["POST /api/v1/submissions/{id}/publish/"]  # ... and reached his own submission

"""A workload whose baseline runs on some platforms only (level 2's Pallas TPU baselines) is
refused on the others at the intake, with the workload's reason, and nothing is stored."""

import io

import pytest

from jaxbench.traces import dumps_lines
from submissions import intake
from submissions.intake import IntakeError
from tests import factories
from tests.submissions.conftest import counts, kernel

pytestmark = pytest.mark.django_db
META = {"method": "Hand-written", "model_name": "Human"}


@pytest.fixture
def twin(catalog):
    return factories.workload("l2-8p")


def _refused(call) -> list[dict]:
    before = counts()
    with pytest.raises(IntakeError) as info:
        call()
    assert counts() == before, "nothing may be stored after a refusal"
    return info.value.errors


def test_kernels_for_a_tpu_baseline_are_refused_on_a_gpu_and_taken_on_cpu(twin, people):
    files = [("l2-8p.py", kernel()), ("12p.py", kernel())]
    errors = _refused(lambda: intake.create_kernel_submission(people.team_a, people.alice, "gpu-h100", META, files))
    assert [e["field"] for e in errors] == ["hardware"]
    assert errors[0]["message"].startswith(
        "workload l2-8p cannot be measured on gpu-h100 (gpu): the baseline is a Pallas"
    )
    # level 1's 12p alone runs on the GPU; both run on the cpu target (the interpreter)
    assert intake.create_kernel_submission(people.team_a, people.alice, "gpu-h100", META, [files[1]]).pk
    sub = intake.create_kernel_submission(people.team_a, people.alice, "cpu", {**META, "upload_key": "k"}, files)
    assert sorted(sub.candidates.values_list("workload__wid", flat=True)) == ["12p", "l2-8p"]


def test_a_test_run_and_a_trace_are_refused_the_same_way(twin, people):
    errors = _refused(lambda: intake.create_test_run(people.team_a, people.alice, "gpu-h200", [("l2-8p.py", kernel())]))
    assert "cannot be measured on gpu-h200" in errors[0]["message"]
    header = {
        "format": "jaxbench-trace/1",
        "method": "m",
        "model": "x",
        "hardware": "gpu-h100",
        "sampling": "independent",
    }
    lines = [header, {"workload": "level2/8p_GEMM", "index": 0, "code": kernel()}]
    data = dumps_lines(lines).encode()
    errors = _refused(lambda: intake.create_trace_submission(people.team_a, people.alice, io.BytesIO(data)))
    assert errors[0]["field"] == "hardware" and "l2-8p" in errors[0]["message"]


def test_a_zip_in_the_public_suite_s_layout_names_each_level(twin, people):
    from tests.submissions.conftest import make_zip

    factories.workload("8p")
    members = {
        "run/benchmark/level2/8p_GEMM/optimized.py": kernel("two"),
        "run/benchmark/level1/8p_GEMM/optimized.py": kernel("one"),
    }
    sub = intake.create_kernel_submission(people.team_a, people.alice, "cpu", META, [("run.zip", make_zip(members))])
    assert sorted(sub.candidates.values_list("workload__wid", flat=True)) == ["8p", "l2-8p"]
    flat = make_zip({"out/level2/8p_GEMM.py": kernel("flat")})
    sub = intake.create_kernel_submission(
        people.team_a, people.alice, "cpu", {**META, "upload_key": "f"}, [("o.zip", flat)]
    )
    assert list(sub.candidates.values_list("workload__wid", flat=True)) == ["l2-8p"]

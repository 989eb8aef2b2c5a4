"""The worker's baseline alone (evaluator.runner.baseline_for): kept in the database; on a miss
there, taken from this host's disk cache where another worker or the command line timed it under
the same key, else measured and stored in both; ``fresh`` (measure_baselines --force) measures.
The measurement itself is replaced here by a counter (the real one: the integration tests and
tests/jaxbench/harness/test_baseline_cache.py); what is tested is which layer answers."""

import pytest

from catalog.models import Baseline
from evaluator import runner
from jaxbench import workloads
from jaxbench.harness import api
from jaxbench.harness import baseline_cache as bc
from tests import factories
from tests.jaxbench.fake_baseline import fake_measure_baseline

pytestmark = pytest.mark.django_db


@pytest.fixture
def measured(monkeypatch, tmp_path, settings):
    monkeypatch.setenv("JAXBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("JAXBENCH_BASELINE_CACHE_DAYS", raising=False)
    settings.JAXBENCH_TIMEOUTS = {"timing": 99.0}
    return fake_measure_baseline(monkeypatch)


def test_a_miss_in_the_database_reads_the_hosts_disk_cache_before_measuring(measured, monkeypatch):
    hw, wl = factories.hardware(), factories.workload("12p")
    first = runner.baseline_for(wl, hw)
    assert measured == [("12p", hw.profile, "cpu", {"timing": 99.0})]  # the worker's limits go with it
    assert "cache" not in first.record and first.median_s == pytest.approx(0.003)
    assert bc.load(bc.key_for(workloads.get("12p"), hw.profile, "cpu", "cpu"))["median_s"] == first.median_s
    assert runner.baseline_for(wl, hw).pk == first.pk and len(measured) == 1  # the database row

    # a new worker database on the same host: the disk cache answers, no child is started
    Baseline.objects.all().delete()
    monkeypatch.setattr(api, "_BASELINES", {})
    again = runner.baseline_for(wl, hw)
    assert len(measured) == 1 and again.median_s == first.median_s and again.record == first.record

    # measure_baselines --force: measured now, and stored in both
    forced = runner.baseline_for(wl, hw, fresh=True)
    assert len(measured) == 2 and forced.pk == again.pk and forced.median_s == pytest.approx(0.004)
    monkeypatch.setattr(api, "_BASELINES", {})
    Baseline.objects.all().delete()
    assert runner.baseline_for(wl, hw).median_s == forced.median_s and len(measured) == 2


def test_with_the_disk_cache_off_every_new_database_measures(measured, monkeypatch):
    monkeypatch.setenv("JAXBENCH_BASELINE_CACHE_DAYS", "0")
    hw, wl = factories.hardware(), factories.workload("12p")
    runner.baseline_for(wl, hw)
    Baseline.objects.all().delete()
    monkeypatch.setattr(api, "_BASELINES", {})  # a new worker process
    runner.baseline_for(wl, hw)
    assert len(measured) == 2

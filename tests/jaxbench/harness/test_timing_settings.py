"""Every platform the harness runs on gets every per-platform timing setting, from its own entry
or the default, and no table names a platform the harness does not know (a typo such as "GPU"
would silently fall back to the accelerator default)."""

import pytest

from jaxbench.hardware import EXPORT_PLATFORMS
from jaxbench.harness import settings, speed

# (table, default) of each per-platform timing setting
TABLES = {
    "resolution target": (settings.RESOLUTION_TARGET, settings.RESOLUTION_TARGET_DEFAULT),
    "min rounds": (settings.MIN_TIMING_ROUNDS, settings.MIN_TIMING_ROUNDS_DEFAULT),
    "budget": (settings.TIMING_BUDGET_S, settings.TIMING_BUDGET_S_DEFAULT),
    "baseline guard": (speed.BASELINE_GUARD, speed.BASELINE_GUARD_DEFAULT),
    "systematic": (speed.SYSTEMATIC, speed.SYSTEMATIC_DEFAULT),
}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_tables_name_known_platforms_only(name):
    table, _ = TABLES[name]
    assert set(table) <= set(EXPORT_PLATFORMS), f"{name}: {sorted(set(table) - set(EXPORT_PLATFORMS))}"


@pytest.mark.parametrize("platform", sorted(EXPORT_PLATFORMS))
def test_every_platform_has_sane_settings(platform):
    def get(name):
        table, default = TABLES[name]
        return table.get(platform, default)

    assert 0 < get("resolution target") <= 0.1
    # at least two rounds, or the two-stage bootstrap cannot see rounds disagree; and room for
    # the adaptive sampling to go on past them
    assert 2 <= get("min rounds") < settings.MAX_TIMING_ROUNDS
    assert get("budget") > 0
    assert get("baseline guard") > 1
    # the systematic part is what no sampling narrows: it is an allowance, not the whole interval
    assert 0 <= get("systematic") < 0.1

"""How close a measured time comes to the hardware's limit (the roofline): pure, stdlib only.

A workload's analytic cost on one case (``Workload.cost(profile)``: FLOPs and bytes moved) and a
chip's sourced peaks (``jaxbench.hardware.PEAKS``) give the *roofline time*, the least time the
work can take: ``max(flops / peak FLOP/s, bytes / peak bandwidth)``. A measured time reaches
``roofline time / measured time`` of the limit: 100% runs at the roofline; above 100% is faster
than the hardware allows for that cost (a wrong cost, a wrong peak or a wrong timing), and a
correct result there is held for review (``verdict/review.py``). Where the peaks are unknown (the
cpu target) there is no roofline and no figure: none is invented.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from ..hardware import Peaks, peaks_of


def _number(v: object) -> float | None:
    """A finite number >= 0, else None (bools, strings, NaN and infinities are not figures)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
        return None
    return float(v)


def roofline_time(flops: float, nbytes: float, peak_flops: float, peak_bandwidth: float) -> float | None:
    """``max(flops / peak_flops, nbytes / peak_bandwidth)`` in seconds; None where a peak is not
    a positive number or the cost is not a pair of numbers >= 0."""
    f, b, pf, pb = (_number(v) for v in (flops, nbytes, peak_flops, peak_bandwidth))
    if f is None or b is None or not pf or not pb:
        return None
    return _limit_s(f, b, pf, pb)


def _limit_s(flops: float, nbytes: float, peak_flops: float, peak_bandwidth: float) -> float:
    return max(flops / peak_flops, nbytes / peak_bandwidth)


@dataclasses.dataclass(frozen=True)
class Roofline:
    """The limit of one workload case on one chip: its cost, the peaks used and their source."""

    flops: float
    nbytes: float
    peak_flops: float
    peak_bandwidth: float
    source: str

    @property
    def time_s(self) -> float:
        return _limit_s(self.flops, self.nbytes, self.peak_flops, self.peak_bandwidth)

    @property
    def bound(self) -> str:
        """``compute`` or ``memory``: which peak sets the limit (a tie counts as compute)."""
        return "compute" if self.flops / self.peak_flops >= self.nbytes / self.peak_bandwidth else "memory"

    def fraction(self, measured_s: object) -> float | None:
        """The fraction of the limit ``measured_s`` reaches (1.0 = at the roofline); None
        without a positive finite time."""
        t = _number(measured_s)
        return self.time_s / t if t else None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, as the record keeps it (``roofline``) and the API shows it."""
        return {
            "flops": self.flops,
            "bytes": self.nbytes,
            "peak_flops": self.peak_flops,
            "peak_bandwidth": self.peak_bandwidth,
            "source": self.source,
            "time_s": self.time_s,
            "bound": self.bound,
        }

    @classmethod
    def from_dict(cls, d: object) -> Roofline | None:
        """:meth:`as_dict`'s dict back (a record's ``roofline``); None for anything else."""
        if not isinstance(d, Mapping):
            return None
        return roofline(d.get("flops"), d.get("bytes"), d.get("peak_flops"), d.get("peak_bandwidth"), d.get("source"))


def roofline(
    flops: object, nbytes: object, peak_flops: object, peak_bandwidth: object, source: object
) -> Roofline | None:
    """The :class:`Roofline` of a cost on peaks; None where a peak is unknown (not positive),
    the cost is not two numbers >= 0, or the work is nothing (both zero: no limit to reach)."""
    f, b, pf, pb = (_number(v) for v in (flops, nbytes, peak_flops, peak_bandwidth))
    if f is None or b is None or not pf or not pb or not (f or b):
        return None
    return Roofline(f, b, pf, pb, str(source or ""))


def of_peaks(flops: object, nbytes: object, peaks: Peaks | None) -> Roofline | None:
    """:func:`roofline` on a :class:`~jaxbench.hardware.Peaks` entry (None: unknown peaks)."""
    if peaks is None:
        return None
    return roofline(flops, nbytes, peaks.flops, peaks.bandwidth, peaks.source)


def fraction_of_limit(flops: object, nbytes: object, measured_s: object, peaks: Peaks | None) -> float | None:
    """The fraction of the limit a measured time reaches: roofline time / measured time (1.0 at
    the roofline, above 1 faster than the peaks allow); None where peaks, cost or time are
    unknown."""
    r = of_peaks(flops, nbytes, peaks)
    return r.fraction(measured_s) if r else None


def of_case(costs: Mapping[str, Any] | None, case: object, hardware: object) -> Roofline | None:
    """The roofline of one case of a workload on a target, from the costs the catalogue keeps
    (``{case: {"flops", "bytes"}}``, the case a profile or ``profile/configuration``) and the
    target's slug; None where either is unknown (a multi-configuration workload has no cost for
    a bare profile: each configuration has its own)."""
    cost = (costs or {}).get(case) if isinstance(case, str) else None
    if not isinstance(cost, Mapping) or not isinstance(hardware, str):
        return None
    return of_peaks(cost.get("flops"), cost.get("bytes"), peaks_of(hardware))


# --------------------------------------------------------------------------- shown as text


def percent(fraction: float) -> str:
    """``0.156`` -> ``"16%"``; ``0.032`` -> ``"3.2%"``; below 0.1%: ``"<0.1%"``; from 99.5% one
    decimal (``"100.4%"``), so a figure above the limit never reads as exactly 100%."""
    p = 100.0 * fraction
    if 10 <= p < 99.5:
        return f"{p:.0f}%"
    return f"{p:.1f}%" if p >= 0.1 else "<0.1%"


def _si(value: float, unit: str) -> str:
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.4g} {prefix}{unit}"
    return f"{value:.4g} {unit}"


def seconds(t: float) -> str:
    """A time as pages write it: ``219 ns``, ``5.3 µs``, ``1.42 ms``, ``2.1 s``."""
    if t >= 1:
        return f"{t:.3g} s"
    if t >= 1e-3:
        return f"{t * 1e3:.3g} ms"
    if t >= 1e-6:
        return f"{t * 1e6:.3g} µs"
    return f"{t * 1e9:.3g} ns"


def explain(r: Roofline) -> str:
    """The figures behind a limit, for a tooltip or a review reason: the roofline time, the cost
    over each peak, which one binds, and the source of the peaks."""
    return (
        f"limit {seconds(r.time_s)} ({r.bound}-bound): max({_si(r.flops, 'FLOP')} / {_si(r.peak_flops, 'FLOP/s')}, "
        f"{_si(r.nbytes, 'B')} / {_si(r.peak_bandwidth, 'B/s')}); peaks: {r.source}"
    )


def label(r: Roofline | None, measured_s: object) -> dict[str, Any] | None:
    """What a page shows beside a measured time: ``{"fraction", "text": "16% of limit",
    "title": explain(r)}``; None where there is no roofline or no time (nothing is shown)."""
    f = r.fraction(measured_s) if r else None
    if r is None or f is None:
        return None
    return {"fraction": f, "text": f"{percent(f)} of limit", "title": explain(r)}

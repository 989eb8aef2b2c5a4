"""The harness's numeric rules as pure functions (numpy only: no Django, no JAX).

Correctness (:func:`exact_rule_report`): an output element passes when

    |cand - exact| <= atol + rtol * |exact| + |xla - exact|

where ``exact`` is the workload's answer computed in float32 from the same bf16 inputs and
``xla`` is the XLA baseline's own output. The candidate may be as far from the truth as XLA is,
plus the tolerance: a kernel that keeps float32 internally (closer to the truth than the bf16
baseline) is never failed for disagreeing with XLA's rounding. NaN/Inf never pass (numpy's
``allclose`` would accept Inf == Inf and a ``max|diff| < tol`` check would miss NaN).

Speed (:func:`paired_speedup`): the candidate and the baseline are timed interleaved in the same
child, so each iteration gives a pair; the speedup is the median of the paired ratios
t_XLA / t_candidate, with a seeded percentile-bootstrap interval over the pairs.

:func:`allclose_report` is the plain two-array rule (used for comparisons between two outputs of
the same program, and by the cheat probes).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike


def _as_f32(x: ArrayLike) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype == np.float32:
        return arr
    return arr.astype(np.float32)


def allclose_report(ref: ArrayLike, cand: ArrayLike, atol: float, rtol: float) -> dict[str, Any]:
    """Compare ``cand`` with ``ref`` elementwise under the harness rule.

    Returns ``passed`` (bool), ``max_abs`` (largest |ref - cand| over elements where both are
    finite), ``max_rel`` (largest |ref - cand| / |ref| over those where also ref != 0),
    ``n_bad`` (elements that fail, non-finite ones included) and ``n_nonfinite`` (elements where
    either side is NaN or Inf). Shapes must be identical: no broadcasting; a mismatch raises
    ``ValueError`` (the harness checks shapes before it compares values).
    """
    r = _as_f32(ref)
    c = _as_f32(cand)
    if r.shape != c.shape:
        raise ValueError(f"shape mismatch: reference {r.shape}, candidate {c.shape}")
    if atol < 0 or rtol < 0:
        raise ValueError("atol and rtol must be >= 0")
    finite = np.isfinite(r) & np.isfinite(c)
    n_nonfinite = int(r.size - np.count_nonzero(finite))
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.where(finite, np.abs(r - c), np.float32(0))
        ok = finite & (diff <= np.float32(atol) + np.float32(rtol) * np.abs(r))
        nz = finite & (r != 0)
        rel = np.where(nz, diff / np.where(nz, np.abs(r), np.float32(1)), np.float32(0))
    n_bad = int(r.size - np.count_nonzero(ok))
    return {
        "passed": n_bad == 0,
        "max_abs": float(diff.max()) if diff.size else 0.0,
        "max_rel": float(rel.max()) if rel.size else 0.0,
        "n_bad": n_bad,
        "n_nonfinite": n_nonfinite,
    }


def _err_stats(err: np.ndarray, tol: np.ndarray, exact: np.ndarray, finite: np.ndarray) -> dict[str, Any]:
    with np.errstate(invalid="ignore", divide="ignore"):
        nz = finite & (exact != 0)
        rel = np.where(nz, err / np.where(nz, np.abs(exact), np.float32(1)), np.float32(0))
    e = np.where(finite, err, np.float32(0))
    return {
        "max_abs": float(e.max()) if e.size else 0.0,
        "max_rel": float(rel.max()) if rel.size else 0.0,
        "n_beyond_tol": int(np.count_nonzero(finite & (err > tol)) + (err.size - np.count_nonzero(finite))),
    }


def exact_rule_report(exact: ArrayLike, xla: ArrayLike, cand: ArrayLike, atol: float, rtol: float) -> dict[str, Any]:
    """Judge ``cand`` against the exact answer with XLA's own error as the allowance.

    Returns ``passed``; ``n_fail`` (elements outside the allowance, non-finite ones included);
    ``n_nonfinite`` (candidate elements that are NaN/Inf); ``worst_excess`` (the largest
    |cand - exact| / allowance over the finite elements: below 1 passes, 10 means ten times
    the allowance); ``candidate`` and ``xla``: ``max_abs``, ``max_rel`` (against the exact
    answer) and ``n_beyond_tol`` (elements beyond ``atol + rtol*|exact|`` alone). Shapes must be
    identical (``ValueError`` otherwise). Where XLA itself is not finite it earns no allowance.
    """
    e = _as_f32(exact)
    x = _as_f32(xla)
    c = _as_f32(cand)
    if not (e.shape == x.shape == c.shape):
        raise ValueError(f"shape mismatch: exact {e.shape}, xla {x.shape}, candidate {c.shape}")
    if atol < 0 or rtol < 0:
        raise ValueError("atol and rtol must be >= 0")
    e_fin = np.isfinite(e)
    x_fin = e_fin & np.isfinite(x)
    c_fin = e_fin & np.isfinite(c)
    with np.errstate(invalid="ignore", over="ignore"):
        tol = np.float32(atol) + np.float32(rtol) * np.abs(np.where(e_fin, e, np.float32(0)))
        x_err = np.where(x_fin, np.abs(x - e), np.float32(0))
        c_err = np.where(c_fin, np.abs(c - e), np.float32(np.inf))
        allowed = tol + x_err
        ok = c_fin & (c_err <= allowed)
        # over the finite candidate elements only: the record is JSON (no Infinity in it);
        # non-finite ones are counted in n_nonfinite and always fail
        excess = np.where(c_fin & (allowed > 0), c_err / np.where(allowed > 0, allowed, np.float32(1)), np.float32(0))
    n_fail = int(c.size - np.count_nonzero(ok))
    return {
        "passed": n_fail == 0,
        "n_fail": n_fail,
        "n_nonfinite": int(c.size - np.count_nonzero(np.isfinite(c))),
        "worst_excess": float(excess.max()) if excess.size else 0.0,
        "candidate": _err_stats(np.where(c_fin, c_err, np.float32(0)), tol, e, c_fin),
        "xla": _err_stats(x_err, tol, e, x_fin),
    }


BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 20_261_203  # fixed: anyone can recompute an interval from the samples


def paired_speedup(
    baseline_s: ArrayLike,
    candidate_s: ArrayLike,
    confidence: float = 0.95,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    block: int = 1,
    systematic: float = 0.0,
    rounds: int = 1,
) -> dict[str, Any]:
    """Speedup of a candidate over the baseline from interleaved, paired timings.

    ``baseline_s[i]`` and ``candidate_s[i]`` were measured next to each other, so load hits both
    alike; the ratio of each pair cancels it. Returns ``speedup`` (median of the paired ratios
    t_XLA / t_candidate), ``lo``/``hi`` (the ``confidence`` percentile-bootstrap interval of
    that median, with a fixed seed), ``n`` and ``method``. Calls were timed in blocks of
    ``block`` (all of one program's block, then the other's), so disturbances are shared within
    a block: the bootstrap resamples whole blocks of pairs, not single pairs, or the interval
    would be too narrow. ``systematic`` widens the interval by that relative amount on each
    side: what differs between two runs of the same code and no resampling within one run can
    see (where each program's buffers landed in memory, say), measured with identical code by
    benchmarks/self_speedup.py. ``rounds``: the pairs were timed in that many rounds of equal
    length, one after another (adaptive sampling); a machine whose speed drifts between rounds
    can change the two programs' ratio (a shared host slows a memory-bound program more than a
    compute-bound one: 1p's example kernel against XLA gave per-round ratios of 0.75-1.08 in
    one quiet run on a 2-core VM). The bootstrap then resamples rounds first and blocks within
    each chosen round (a two-stage bootstrap), so the interval is as wide as the rounds
    disagree.
    """
    b = np.asarray(baseline_s, dtype=np.float64)
    c = np.asarray(candidate_s, dtype=np.float64)
    if b.shape != c.shape or b.ndim != 1 or b.size < 2:
        raise ValueError("need two equally long series of at least 2 paired timings")
    if not systematic >= 0:
        raise ValueError("systematic must be >= 0")
    if not (np.all(np.isfinite(b)) and np.all(np.isfinite(c)) and np.all(b > 0) and np.all(c > 0)):
        raise ValueError("timings must be finite and positive")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be in (0, 1)")
    block, rounds = int(block), int(rounds)
    if block < 1 or b.size % block or b.size // block < 2:
        raise ValueError(f"{b.size} pairs do not form at least two blocks of {block}")
    if rounds < 1 or (b.size // block) % rounds or b.size // block // rounds < 2:
        raise ValueError(f"{b.size} pairs do not form {rounds} equal rounds of at least two blocks of {block}")
    ratios = b / c
    point = float(np.median(ratios))
    groups = ratios.reshape(rounds, -1, block)  # rounds x blocks x pairs
    n_blocks = groups.shape[1]
    rng = np.random.default_rng(seed)
    pick_rounds = rng.integers(0, rounds, size=(int(resamples), rounds, 1))
    pick_blocks = rng.integers(0, n_blocks, size=(int(resamples), rounds, n_blocks))
    medians = np.median(groups[pick_rounds, pick_blocks].reshape(int(resamples), -1), axis=1)
    alpha = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(medians, [alpha, 1.0 - alpha])
    if rounds > 1:
        # a bootstrap over few clusters underestimates their spread by (R - 1) / R in variance:
        # the ends move out from the median by sqrt(R / (R - 1)) in log space
        k = math.sqrt(rounds / (rounds - 1))
        lo, hi = point * (lo / point) ** k, point * (hi / point) ** k
    est = {
        "speedup": point,
        # what sampling alone reached (the adaptive sampling's stop rule reads it: more samples
        # narrow this part, never the systematic one)
        "sampling_halfwidth": resolution(point, float(lo), float(hi)),
        "lo": float(lo),
        "hi": float(hi),
        "n": int(ratios.size),
        "rounds": rounds,
        "round_speedups": [float(np.median(g)) for g in groups],
        "confidence": confidence,
        "systematic": 0.0,
        "method": "median of paired ratios; percentile bootstrap over "
        + (f"{rounds} rounds, then " if rounds > 1 else "")
        + f"{'pairs' if block == 1 else f'blocks of {block} pairs'}, "
        f"{int(resamples)} resamples, seed {seed}",
    }
    return widen(est, systematic)


def widen(est: dict[str, Any], systematic: float) -> dict[str, Any]:
    """``est`` (a :func:`paired_speedup` result) with its interval widened by the relative
    ``systematic`` uncertainty on each side; the sampling part (``sampling_halfwidth``) stays."""
    if not systematic >= 0:
        raise ValueError("systematic must be >= 0")
    if not systematic:
        return dict(est)
    return {
        **est,
        "lo": est["lo"] / (1.0 + systematic),
        "hi": est["hi"] * (1.0 + systematic),
        "systematic": est["systematic"] + systematic,
        "method": f"{est['method']}; widened by {systematic:.0%} run-to-run systematic uncertainty",
    }


def resolution(speedup: float, lo: float, hi: float) -> float:
    """The relative half-width of an interval around ``speedup``: (hi - lo) / (2 * speedup)
    (0.05 reads "+-5%")."""
    if not speedup > 0:
        raise ValueError("speedup must be positive")
    return float((hi - lo) / (2.0 * speedup))


def keep_sampling(
    halfwidth: float,
    target: float,
    rounds: int,
    max_rounds: int,
    elapsed_s: float,
    last_round_s: float,
    budget_s: float,
    min_rounds: int = 1,
) -> str | None:
    """The adaptive sampling's stop rule: None while another round of interleaved blocks should
    be timed, else why timing stops: ``"target"`` (the sampling interval is as narrow as the
    target), ``"rounds"`` (``max_rounds`` timed) or ``"budget"`` (another round as long as the
    last would end past ``budget_s`` of timing). Fewer than ``min_rounds`` never stop it: the
    interval cannot show how far rounds disagree before there are several (paired_speedup's
    ``rounds``). It reads the interval's width only, never where the interval lies, so stopping
    early cannot favour a label; an interval that still straddles 1 when timing stops is a tie."""
    if rounds < min_rounds:
        return None
    if halfwidth <= target:
        return "target"
    if rounds >= max_rounds:
        return "rounds"
    if elapsed_s + last_round_s > budget_s:
        return "budget"
    return None


def baseline_guard(beside_median_s: float, alone_median_s: float, limit: float) -> dict[str, Any]:
    """Can the baseline timed beside the candidate be believed? It is compared with the same
    program timed alone in a clean child: ``trusted`` unless it ran more than ``limit`` times
    slower beside the candidate (the machine's load changed in between: the caller times
    again). Faster beside the candidate only lowers the candidate's speedup, so it passes."""
    if not (beside_median_s > 0 and alone_median_s > 0):
        raise ValueError("medians must be positive")
    ratio = beside_median_s / alone_median_s
    trusted = ratio <= limit
    msg = (
        ""
        if trusted
        else (
            f"the XLA baseline ran {ratio:.2f}x slower beside this candidate than alone in a clean "
            f"child (limit {limit:g}x): the side-by-side timing is not trusted"
        )
    )
    return {"trusted": trusted, "ratio": ratio, "limit": limit, "message": msg}

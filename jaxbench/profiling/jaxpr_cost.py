"""Where a traced program's FLOPs are: outside every ``pallas_call`` (XLA's work) or inside.

One walk over a traced jaxpr (``jax.jit(f).trace(*specs).jaxpr``), shared by both sides:

* the sandboxed child applies it to the candidate's program during the compile phase and
  reports the result as a claim (``sandbox/child_main.py`` loads this file from its input directory,
  where the trusted side wrote it before any candidate code exists there);
* the trusted side applies it to the workload's XLA reference (``reference_cost``), the
  denominator of the share, and judges the claim with :mod:`jaxbench.verdict.pallas_share`.

The cost model (one number per equation, "FLOPs"):

* ``dot_general``: 2 * (output elements) * (contracted size); ``ragged_dot(_general)`` the same
  per row; ``conv_general_dilated``: 2 * (output elements) * (kernel elements per output
  feature);
* floating-point elementwise arithmetic (add, mul, exp, tanh, ...): one per output element;
  transcendental functions count one like any other;
* reductions, cumulative ops, ``scatter-add`` and friends: one per input (update) element;
  sort: n * log2(n) per sorted row; FFT: 5 n log2(n); dense linear algebra: n^3 per matrix;
* everything else is layout glue and costs nothing: reshape, transpose, broadcast, pad, slice,
  concatenate, casts, squeeze/expand_dims, gather/scatter, iota, copy, selects of masks,
  comparisons, integer index arithmetic.

Sub-programs are followed with their multiplicity: ``scan`` x its length, ``cond`` as its
most expensive branch, ``while`` x its trip count where the loop has the ``fori_loop`` shape
(``i < literal`` with a literal start), once otherwise (counted in ``unknown_trip_loops``);
pjit, closed_call, custom_jvp/custom_vjp, remat and any other primitive carrying a jaxpr once.
A ``pallas_call``'s body is never counted as outside work: it is its grid size x the body's
cost, reported apart as ``inside_flops``.

Only the standard library and JAX are imported: the child loads this file by path.
"""

from __future__ import annotations

import math
import os

PALLAS_PRIMITIVES = ("pallas_call",)
TOP_N = 5
MAX_DEPTH = 64

ELEMENTWISE = frozenset(
    """
add add_any sub mul div rem max min neg abs sign floor ceil round nextafter clamp
pow integer_pow square sqrt rsqrt cbrt exp exp2 log log1p expm1 tanh logistic
sin cos tan asin acos atan atan2 sinh cosh asinh acosh atanh
erf erfc erf_inv lgamma digamma polygamma igamma igammac igamma_grad_a random_gamma_grad
bessel_i0e bessel_i1e zeta regularized_incomplete_beta conj real imag complex
""".split()
)
REDUCTIONS = frozenset(
    """
reduce_sum reduce_max reduce_min reduce_prod reduce argmax argmin reduce_and reduce_or
reduce_xor cumsum cumprod cummax cummin cumlogsumexp reduce_window_sum reduce_window_max
reduce_window_min reduce_window scatter-add scatter_add scatter-mul scatter_mul scatter-min
scatter_min scatter-max scatter_max select_and_scatter_add select_and_gather_add
""".split()
)
# primitives whose updates carry the arithmetic (one per update element, not per operand)
SCATTERS = frozenset(
    (
        "scatter-add",
        "scatter_add",
        "scatter-mul",
        "scatter_mul",
        "scatter-min",
        "scatter_min",
        "scatter-max",
        "scatter_max",
    )
)
LINALG = frozenset(
    (
        "cholesky",
        "lu",
        "qr",
        "householder_product",
        "eigh",
        "eig",
        "svd",
        "triangular_solve",
        "schur",
        "hessenberg",
        "tridiagonal",
        "tridiagonal_solve",
    )
)


def _size(shape) -> int:
    n = 1
    for d in shape:
        n *= d if isinstance(d, int) else 1  # symbolic/dynamic dims count as 1
    return n


def _aval(v):
    aval = getattr(v, "aval", None)
    inner = getattr(aval, "inner_aval", None)  # pallas refs: the array they hold
    return inner if inner is not None else aval


def _shape(v):
    return tuple(getattr(_aval(v), "shape", ()) or ())


def _is_float(v) -> bool:
    dt = getattr(_aval(v), "dtype", None)
    if dt is None:
        return False
    try:
        import jax.numpy as jnp  # deferred: this file also runs in the child, before JAX is set up

        return bool(jnp.issubdtype(dt, jnp.inexact))  # bfloat16 and float8 included
    except TypeError:
        return "float" in str(dt) or "complex" in str(dt)


def eqn_flops(eqn) -> int:
    """The FLOPs of one equation that carries no sub-program (0 for layout glue)."""
    name = eqn.primitive.name
    p = eqn.params
    if name == "dot_general":
        (lc, _rc), _batch = p["dimension_numbers"]
        lhs = _shape(eqn.invars[0])
        k = _size(lhs[d] for d in lc)
        return 2 * _size(_shape(eqn.outvars[0])) * k
    if name in ("ragged_dot", "ragged_dot_general"):
        lhs = _shape(eqn.invars[0])
        k = lhs[-1] if lhs else 1
        dn = p.get("ragged_dot_dimension_numbers")
        if dn is not None:
            (lc, _rc), _batch = dn.dot_dimension_numbers
            k = _size(lhs[d] for d in lc)
        return 2 * _size(_shape(eqn.outvars[0])) * k
    if name == "conv_general_dilated":
        rhs = _shape(eqn.invars[1])
        dn = p.get("dimension_numbers")
        out_dim = dn.rhs_spec[0] if dn is not None and getattr(dn, "rhs_spec", None) else 0
        per_out = _size(rhs) // max(1, rhs[out_dim] if rhs else 1)
        return 2 * _size(_shape(eqn.outvars[0])) * per_out
    if name in ELEMENTWISE:
        out = eqn.outvars[0]
        return _size(_shape(out)) if _is_float(out) else 0
    if name in SCATTERS:
        upd = eqn.invars[2] if len(eqn.invars) > 2 else eqn.invars[-1]
        return _size(_shape(upd)) if _is_float(upd) else 0
    if name in REDUCTIONS:
        return _size(_shape(eqn.invars[0])) if _is_float(eqn.invars[0]) else 0
    if name in ("sort", "top_k", "approx_top_k"):
        shape = _shape(eqn.invars[0])
        n = shape[-1] if shape and isinstance(shape[-1], int) else 1
        return _size(shape) * max(1, math.ceil(math.log2(max(n, 2))))
    if name == "fft":
        shape = _shape(eqn.invars[0])
        n = _size(shape[-len(p.get("fft_lengths", ()) or (1,)) :]) if shape else 1
        return 5 * _size(shape) * max(1, math.ceil(math.log2(max(n, 2))))
    if name in LINALG:
        shape = _shape(eqn.invars[0])
        if len(shape) >= 2:
            n = max(shape[-1], shape[-2]) if all(isinstance(d, int) for d in shape[-2:]) else 1
            return _size(shape[:-2]) * n**3
        return 0
    return 0


def _literal_value(v):
    val = getattr(v, "val", None)
    if val is None:
        return None
    try:
        import numpy as np  # deferred: as above

        a = np.asarray(val)
        return int(a) if a.shape == () and np.issubdtype(a.dtype, np.integer) else None
    except Exception:  # noqa: BLE001
        return None


def _while_trips(eqn):
    """The trip count of a while loop shaped like ``fori_loop(lit, lit, ...)``, else None."""
    cond = eqn.params.get("cond_jaxpr")
    cj = getattr(cond, "jaxpr", cond)
    n_cconst = eqn.params.get("cond_nconsts", 0)
    n_bconst = eqn.params.get("body_nconsts", 0)
    if cj is None or len(cj.eqns) != 1 or cj.eqns[0].primitive.name != "lt":
        return None
    a, b = cj.eqns[0].invars
    upper = _literal_value(b)
    if upper is None or a not in cj.invars:
        return None
    k = cj.invars.index(a) - n_cconst
    init = eqn.invars[n_cconst + n_bconst :]
    if not 0 <= k < len(init):
        return None
    lower = _literal_value(init[k])
    if lower is None:
        return None
    return max(0, upper - lower)


def _sub_jaxprs(v):
    """The jaxprs held by one parameter value (a Jaxpr, a ClosedJaxpr, or tuples of them)."""
    from jax.extend import core as jcore  # deferred: as above

    if isinstance(v, jcore.ClosedJaxpr):
        yield v.jaxpr
    elif isinstance(v, jcore.Jaxpr):
        yield v
    elif isinstance(v, (tuple, list)):
        for x in v:
            yield from _sub_jaxprs(x)


def _grid_size(eqn) -> int:
    gm = eqn.params.get("grid_mapping")
    grid = getattr(gm, "grid", None) or eqn.params.get("grid") or ()
    return _size(grid)


def _where(eqn) -> str:
    try:
        from jax._src import source_info_util as siu  # deferred: as above

        frames = list(siu.user_frames(eqn.source_info.traceback))
    except Exception:  # noqa: BLE001
        return "?"
    if not frames:
        return "?"
    for f in frames:  # the candidate's own line, when it has one
        if os.path.basename(f.file_name) == "candidate.py":
            return f"candidate.py:{f.start_line}"
    f = frames[0]
    return f"{os.path.basename(f.file_name)}:{f.start_line}"


class _Acc:
    def __init__(self) -> None:
        self.outside: dict[str, int] = {}
        self.sites: dict[tuple[str, str], int] = {}
        self.inside = 0
        self.pallas_calls = 0
        self.unknown_trip_loops = 0
        self.unaccounted = 0

    def merge(self, other: _Acc):
        for k, v in other.outside.items():
            self.outside[k] = self.outside.get(k, 0) + v
        for site, v in other.sites.items():
            self.sites[site] = self.sites.get(site, 0) + v
        self.inside += other.inside
        self.pallas_calls += other.pallas_calls
        self.unknown_trip_loops += other.unknown_trip_loops
        self.unaccounted += other.unaccounted


def _walk(jaxpr, acc: _Acc, mult: int, inside: bool, depth: int):
    if depth > MAX_DEPTH:
        acc.unaccounted += 1
        return 0
    total = 0
    for eqn in jaxpr.eqns:
        try:
            total += _eqn(eqn, acc, mult, inside, depth)
        except Exception:  # noqa: BLE001 - an unusual equation must not hide the others
            acc.unaccounted += 1
    return total


def _eqn(eqn, acc: _Acc, mult: int, inside: bool, depth: int) -> int:
    """Adds one equation's cost (times ``mult``) to the accumulator; returns it."""
    name = eqn.primitive.name
    if name in PALLAS_PRIMITIVES:
        acc.pallas_calls += 1
        body_mult = mult * max(1, _grid_size(eqn))
        cost = 0
        for v in eqn.params.values():
            for sub in _sub_jaxprs(v):
                cost += _walk(sub, acc, body_mult, True, depth + 1)
        return cost
    subs = [(k, list(_sub_jaxprs(v))) for k, v in eqn.params.items()]
    subs = [(k, s) for k, s in subs if s]
    if not subs:
        flops = eqn_flops(eqn) * mult
        if flops:
            if inside:
                acc.inside += flops
            else:
                acc.outside[name] = acc.outside.get(name, 0) + flops
                site = (name, _where(eqn))
                acc.sites[site] = acc.sites.get(site, 0) + flops
        return flops
    if name == "cond":
        # the most expensive branch: each walked once into its own accumulator
        best, best_cost = None, -1
        for _k, jaxprs in subs:
            for sub in jaxprs:
                branch = _Acc()
                c = _walk(sub, branch, mult, inside, depth + 1)
                if c > best_cost:
                    best, best_cost = branch, c
        if best is None:
            return 0
        acc.merge(best)
        return best_cost
    m = mult
    if name == "scan":
        m = mult * max(1, int(eqn.params.get("length", 1) or 1))
    elif name == "while":
        trips = _while_trips(eqn)
        if trips is None:
            acc.unknown_trip_loops += 1
            trips = 1
        m = mult * trips
    cost = 0
    for _k, jaxprs in subs:
        for sub in jaxprs:
            cost += _walk(sub, acc, m, inside, depth + 1)
    return cost


def program_cost(jaxpr, top: int = TOP_N) -> dict:
    """The cost of a traced program (a ClosedJaxpr or Jaxpr): plain data, JSON-ready.

    ``outside``: FLOPs per primitive outside every pallas_call; ``outside_flops`` their sum;
    ``inside_flops``: grid size x body cost of the pallas_calls; ``top_outside``: the largest
    outside operations [{"primitive", "flops", "where"}] (``where``: ``candidate.py:LINE`` where
    the candidate's own code issued it); ``pallas_calls``; ``unknown_trip_loops`` (while loops
    counted once); ``unaccounted`` (equations the walk could not cost)."""
    acc = _Acc()
    _walk(getattr(jaxpr, "jaxpr", jaxpr), acc, 1, False, 0)
    sites = sorted(acc.sites.items(), key=lambda kv: -kv[1])[:top]
    return {
        "outside": dict(sorted(acc.outside.items(), key=lambda kv: -kv[1])),
        "outside_flops": sum(acc.outside.values()),
        "inside_flops": acc.inside,
        "top_outside": [{"primitive": p, "flops": f, "where": w} for (p, w), f in sites],
        "pallas_calls": acc.pallas_calls,
        "unknown_trip_loops": acc.unknown_trip_loops,
        "unaccounted": acc.unaccounted,
    }

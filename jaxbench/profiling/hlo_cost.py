"""Facts about an exported program (``jax.export.Exported``) read from its StableHLO: its
signature, the custom calls it makes, its Pallas kernel calls, and where its FLOPs are.

The timer child computes these from the artifact it deserialized (it never runs candidate
Python), and the trusted side applies the same walk to the workload's own exported baseline,
so the numerator and the denominator of the Pallas share come from one representation.
The child loads this file BY PATH from its input directory (like ``jaxpr_cost.py``): only the
standard library and JAX/jaxlib are imported, no sibling module.

The cost model mirrors ``jaxpr_cost.py`` (one number per operation, "FLOPs"):

* ``dot_general``: 2 * (output elements) * (contracted size); ``dot``: 2 * out * K;
  ``convolution``: 2 * (output elements) * (kernel elements per output feature);
* floating-point elementwise arithmetic (add, multiply, exponential, tanh, ...): one per output
  element (integer arithmetic is index bookkeeping and free, as in the jaxpr walk);
* ``reduce``, ``reduce_window``, ``select_and_scatter`` and an arithmetic ``scatter``: one per
  input (update) element; ``sort``: n * ceil(log2 n) per sorted row; ``fft``: 5 n log2 n;
  ``cholesky`` / ``triangular_solve``: n^3 per matrix;
* layout glue is free: reshape, transpose, broadcast, pad, slice, concatenate, converts,
  compare, select, gather/scatter without arithmetic, iota, constants.

Since JAX lowers CHLO functions (erf, lgamma, asin, ...) into several StableHLO operations,
the HLO count of such a function is larger than the jaxpr walk's 1 per element; both sides of
the share use this walk, so the ratio stays consistent.

Structure is followed with multiplicity: ``func.call`` (and ``stablehlo.composite``'s
decomposition) into the callee, each function costed once and scaled; ``stablehlo.case`` /
``stablehlo.if`` as the most expensive branch; ``stablehlo.while`` x its trip count where it has
the ``fori_loop`` / ``scan`` shape (the counter starts at a constant, the condition is
``counter < bound``, the body returns ``counter + constant``; the bound a constant expression
or a loop-invariant carried value that starts as one, as Pallas's interpreter writes its grid
loop), else once with a reason in ``uncountable`` when its body or condition holds work.

A Pallas kernel is a custom call to one of :data:`KERNEL_TARGETS` (``tpu_custom_call``, the
Triton and Mosaic GPU targets). Its body is an opaque serialized kernel: never outside work.
A kernel call "runs unconditionally" when it sits at the top level of ``main`` or of a
function ``main`` calls unconditionally, or inside while loops with a known trip count >= 1;
one inside a ``case`` / ``if`` branch or a loop of unknown trip count only may run.

Fail closed: whatever makes the count untrustworthy is listed in ``uncountable`` and never
counted as 0 -- a loop with a data-dependent trip count that holds work, a custom call that is
neither a kernel nor known to be FLOP-free (an opaque call can hide work), a reduction or
sort body that does more than scalar arithmetic, an operation the model does not know,
dynamic shapes, recursion, nesting past :data:`MAX_DEPTH`, a program that cannot be parsed.
Operations are walked through the MLIR Python bindings shipped with jaxlib (never regular
expressions over the text); the only string read apart is an operation's location, for the
``where`` shown to a person, with a small lexer that respects quoting.
"""

from __future__ import annotations

import math
import os

TOP_N = 5
MAX_DEPTH = 64
MAX_OPS = 2_000_000  # operations walked before the program counts as too large to cost
MAX_REASONS = 20
MAX_SITES = 20

# custom-call targets that are Pallas kernels (the kernel itself, compiled by the backend)
KERNEL_TARGETS = frozenset(
    (
        "tpu_custom_call",  # Pallas TPU (Mosaic)
        "__gpu$xla.gpu.triton",  # Pallas Triton, lowered through XLA's Triton emitter
        "triton_kernel_call",  # Pallas Triton, precompiled (legacy)
        "triton_kernel_call_ffi",  # Pallas Triton, precompiled (FFI)
        "mosaic_gpu",  # Pallas Mosaic GPU (legacy)
        "mosaic_gpu_v2",  # Pallas Mosaic GPU
    )
)
# custom-call targets JAX emits that do no arithmetic (sharding annotations, allocation)
FLOP_FREE_TARGETS = frozenset(
    (
        "Sharding",
        "SPMDFullToShardShape",
        "SPMDShardToFullShape",
        "annotate_device_placement",
        "AllocateBuffer",
        "MoveToHost",
        "MoveToDevice",
    )
)
HOST_CALLBACK_TARGETS = frozenset(
    (
        "xla_python_cpu_callback",
        "xla_ffi_python_cpu_callback",
        "xla_ffi_partitioned_python_cpu_callback",
        "xla_python_gpu_callback",
        "xla_ffi_python_gpu_callback",
        "xla_ffi_partitioned_python_gpu_callback",
        "tpu_host_callback",
    )
)
# operations that move data between the program and the host (how TPU callbacks lower)
HOST_TRANSFER_OPS = frozenset(("stablehlo.send", "stablehlo.recv", "stablehlo.infeed", "stablehlo.outfeed"))

ELEMENTWISE = frozenset(
    "stablehlo." + n
    for n in """
add subtract multiply divide remainder maximum minimum negate abs sign floor ceil
round_nearest_afz round_nearest_even power sqrt rsqrt cbrt exponential exponential_minus_one
log log_plus_one tanh logistic sine cosine tan atan2 clamp complex real imag
and or xor not shift_left shift_right_arithmetic shift_right_logical popcnt count_leading_zeros
""".split()
) | frozenset(
    "chlo." + n
    for n in """
acos acosh asin asinh atan atanh bessel_i1e conj cosh digamma erf erf_inv erfc lgamma
next_after polygamma sinh tan zeta square
""".split()
)
# layout glue and bookkeeping: free
FREE = frozenset(
    "stablehlo." + n
    for n in """
constant iota reshape transpose broadcast broadcast_in_dim pad slice dynamic_slice
dynamic_update_slice concatenate reverse convert bitcast_convert reduce_precision compare select
is_finite gather copy tuple get_tuple_element optimization_barrier after_all create_token
partition_id replica_id rng rng_bit_generator get_dimension_size return
""".split()
) | frozenset(("func.return", "sdy.sharding_constraint", "sdy.sharding_group", "sdy.mesh", "sdy.return"))
# ops whose scalar body is applied per element: one FLOP per input (update) element
COMBINERS = frozenset(
    ("stablehlo.reduce", "stablehlo.reduce_window", "stablehlo.select_and_scatter", "stablehlo.scatter")
)
BRANCHES = frozenset(("stablehlo.case", "stablehlo.if"))
# what a combiner / comparator body may hold: scalar arithmetic and selection, nothing else
_BODY_OK = ELEMENTWISE | frozenset(
    "stablehlo." + n for n in "constant convert compare select return is_finite bitcast_convert".split()
)


class Uncountable(Exception):
    """An operation the walk cannot cost (the reason is the message)."""


# --------------------------------------------------------------------------- types


def _ir():
    from jax._src.interpreters import mlir  # deferred: this file also runs in the child

    return mlir.ir


def _tensor(value_type):
    ir = _ir()
    if isinstance(value_type, ir.RankedTensorType):
        return value_type
    if isinstance(value_type, ir.ShapedType):  # unranked tensor
        raise Uncountable("a tensor of unknown rank")
    return None


def _shape(value) -> tuple[int, ...]:
    t = _tensor(value.type)
    if t is None:
        return ()
    if not t.has_static_shape:
        raise Uncountable("a dynamically shaped tensor")
    return tuple(int(d) for d in t.shape)


def _size(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _is_float(value) -> bool:
    ir = _ir()
    t = _tensor(value.type)
    if t is None:
        return False
    et = t.element_type
    return isinstance(et, (ir.FloatType, ir.ComplexType))


def _is_int_scalar(value) -> bool:
    ir = _ir()
    t = _tensor(value.type)
    return t is not None and t.rank == 0 and isinstance(t.element_type, ir.IntegerType)


def _log2(n: int) -> int:
    return max(1, math.ceil(math.log2(max(n, 2))))


def _int_list(attr) -> list[int]:
    ir = _ir()
    if isinstance(attr, ir.DenseI64ArrayAttr) or isinstance(attr, ir.DenseI32ArrayAttr):
        return [int(x) for x in attr]
    if isinstance(attr, ir.DenseIntElementsAttr):
        return [int(x) for x in attr]
    if isinstance(attr, ir.ArrayAttr):
        return [int(ir.IntegerAttr(x).value) for x in attr]
    raise Uncountable(f"an unreadable attribute {type(attr).__name__}")


def _attr(op, name):
    try:
        return op.attributes[name]
    except (KeyError, IndexError):
        return None


def _str_attr(op, name) -> str | None:
    ir = _ir()
    a = _attr(op, name)
    if a is None:
        return None
    if isinstance(a, ir.StringAttr):
        return a.value
    if isinstance(a, ir.FlatSymbolRefAttr):
        return a.value
    raise Uncountable(f"an unreadable {name} attribute")


def _const_int(value) -> int | None:
    """The integer a scalar ``stablehlo.constant`` holds, else None."""
    ir = _ir()
    owner = value.owner
    if not isinstance(owner, ir.Operation) and hasattr(owner, "operation"):
        owner = owner.operation
    if not isinstance(owner, ir.Operation) or owner.name != "stablehlo.constant":
        return None
    if not _is_int_scalar(value):
        return None
    a = _attr(owner, "value")
    if not isinstance(a, ir.DenseIntElementsAttr) or not a.is_splat:
        return None
    try:
        return int(ir.IntegerAttr(a.get_splat_value()).value)
    except Exception:  # noqa: BLE001
        return None


_FOLD = {
    "stablehlo.add": lambda a, b: a + b,
    "stablehlo.subtract": lambda a, b: a - b,
    "stablehlo.multiply": lambda a, b: a * b,
}


def _fold_int(value, depth: int = 0) -> int | None:
    """A scalar integer computed from constants only (+, -, *, converts), else None."""
    ir = _ir()
    if depth > 16 or not _is_int_scalar(value):
        return None
    c = _const_int(value)
    if c is not None:
        return c
    owner = getattr(value.owner, "operation", value.owner)
    if not isinstance(owner, ir.Operation):
        return None
    if owner.name == "stablehlo.convert":
        return _fold_int(owner.operands[0], depth + 1)
    fn = _FOLD.get(owner.name)
    if fn is None or len(owner.operands) != 2:
        return None
    a, b = _fold_int(owner.operands[0], depth + 1), _fold_int(owner.operands[1], depth + 1)
    if a is None or b is None or abs(a) > 2**62 or abs(b) > 2**62:
        return None
    return fn(a, b)


# --------------------------------------------------------------------------- locations


def _lex(s: str, limit: int = 4000):
    """Tokens of a printed MLIR location: ("s", text) for quoted strings (escapes honoured),
    ("i", text) for integers, ("p", char) for anything else. Bounded by ``limit`` tokens."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(s)
    while i < n and len(out) < limit:
        c = s[i]
        if c == '"':
            j, buf = i + 1, []
            while j < n and s[j] != '"':
                if s[j] == "\\" and j + 1 < n:
                    buf.append(s[j + 1])
                    j += 2
                    continue
                buf.append(s[j])
                j += 1
            out.append(("s", "".join(buf)))
            i = j + 1
        elif c.isdigit():
            j = i
            while j < n and s[j].isdigit():
                j += 1
            out.append(("i", s[i:j]))
            i = j
        elif c.isspace():
            i += 1
        else:
            out.append(("p", c))
            i += 1
    return out


def where(op) -> str:
    """``candidate.py:LINE`` where the operation's location names the candidate's file, else
    the first ``file:LINE`` it carries, else "?". For people only: decides nothing."""
    try:
        text = str(op.location)
    except Exception:  # noqa: BLE001
        return "?"
    toks = _lex(text[:20000])
    files = []
    for k in range(len(toks) - 2):
        if toks[k][0] == "s" and toks[k + 1] == ("p", ":") and toks[k + 2][0] == "i":
            files.append((os.path.basename(toks[k][1])[:80], toks[k + 2][1][:9]))
    for f, line in files:
        if f == "candidate.py":
            return f"{f}:{line}"
    return f"{files[0][0]}:{files[0][1]}" if files else "?"


# --------------------------------------------------------------------------- the walk


class _Acc:
    """What one function / region costs, per execution (scaled when merged)."""

    def __init__(self) -> None:
        self.by_op: dict[str, int] = {}
        self.sites: dict[tuple[str, str], int] = {}
        self.kernels: list[tuple[str, bool, str]] = []  # (target, unconditional, where)
        self.uncountable: list[str] = []

    @property
    def flops(self) -> int:
        return sum(self.by_op.values())

    def add(self, name: str, flops: int, site: str) -> None:
        if flops:
            self.by_op[name] = self.by_op.get(name, 0) + flops
            self.sites[(name, site)] = self.sites.get((name, site), 0) + flops

    def reason(self, why: str) -> None:
        if why not in self.uncountable and len(self.uncountable) < MAX_REASONS:
            self.uncountable.append(why)

    def merge(self, other: _Acc, mult: int, conditional: bool, *, flops: bool = True) -> None:
        if flops:
            for k, v in other.by_op.items():
                self.by_op[k] = self.by_op.get(k, 0) + v * mult
            for s, v in other.sites.items():
                self.sites[s] = self.sites.get(s, 0) + v * mult
        for target, uncond, w in other.kernels:
            self.kernels.append((target, uncond and not conditional, w))
        for r in other.uncountable:
            self.reason(r)


def _short(name: str) -> str:
    return name[len("stablehlo.") :] if name.startswith("stablehlo.") else name


class _Walker:
    def __init__(self, module) -> None:
        self.funcs = {}
        for op in module.body.operations:
            op = op.operation
            if op.name == "func.func":
                self.funcs[_str_attr(op, "sym_name")] = op
        self.memo: dict[str, _Acc] = {}
        self.active: set[str] = set()
        self.ops = 0

    def function(self, name: str, depth: int) -> _Acc:
        if name in self.memo:
            return self.memo[name]
        acc = _Acc()
        fn = self.funcs.get(name)
        if fn is None:
            acc.reason(f"a call to an unknown function {name[:80]!r}")
        elif name in self.active:
            acc.reason(f"a recursive call to {name[:80]!r}")
            return acc  # not memoised: the outer walk of this function is still under way
        else:
            self.active.add(name)
            try:
                for region in fn.regions:
                    self.region(region, acc, depth + 1)
            finally:
                self.active.discard(name)
        self.memo[name] = acc
        return acc

    def region(self, region, acc: _Acc, depth: int) -> None:
        if depth > MAX_DEPTH:
            acc.reason(f"nesting deeper than {MAX_DEPTH} levels")
            return
        for block in region.blocks:
            for op in block.operations:
                op = op.operation
                self.ops += 1
                if self.ops > MAX_OPS:
                    acc.reason(f"a program of more than {MAX_OPS} operations")
                    return
                try:
                    self.op(op, acc, depth)
                except Uncountable as exc:
                    acc.reason(f"{exc} ({_short(op.name)} at {where(op)})")
                except Exception as exc:  # noqa: BLE001 - an unusual operation must not hide the others
                    acc.reason(f"{_short(op.name)} at {where(op)} could not be read ({type(exc).__name__})")

    def sub(self, regions, depth: int) -> _Acc:
        acc = _Acc()
        for r in regions:
            self.region(r, acc, depth + 1)
        return acc

    def op(self, op, acc: _Acc, depth: int) -> None:
        name = op.name
        if name in FREE:
            if len(op.regions):
                raise Uncountable("an operation with unexpected regions")
            return
        if name in ELEMENTWISE:
            out = op.results[0] if len(op.results) else None
            if out is not None and _is_float(out):
                acc.add(_short(name), _size(_shape(out)), where(op))
            return
        if name == "stablehlo.dot_general":
            from jaxlib.mlir.dialects import stablehlo as sh  # deferred: as above

            dn = sh.DotDimensionNumbers(op.attributes["dot_dimension_numbers"])
            lhs = _shape(op.operands[0])
            k = _size(lhs[d] for d in dn.lhs_contracting_dimensions)
            acc.add("dot_general", 2 * _size(_shape(op.results[0])) * k, where(op))
            return
        if name == "stablehlo.dot":
            lhs = _shape(op.operands[0])
            k = lhs[-1] if lhs else 1
            acc.add("dot", 2 * _size(_shape(op.results[0])) * k, where(op))
            return
        if name == "stablehlo.convolution":
            from jaxlib.mlir.dialects import stablehlo as sh  # deferred: as above

            cdn = sh.ConvDimensionNumbers(op.attributes["dimension_numbers"])
            rhs = _shape(op.operands[1])
            per_out = _size(rhs) // max(1, rhs[cdn.kernel_output_feature_dimension] if rhs else 1)
            acc.add("convolution", 2 * _size(_shape(op.results[0])) * per_out, where(op))
            return
        if name in COMBINERS:
            self._check_body(op)
            arith = self._body_has_arithmetic(op)
            if name == "stablehlo.scatter":
                n_in = (len(op.operands) - 1) // 2
                upd = op.operands[1 + n_in] if n_in else None
                if arith and upd is not None and _is_float(upd):
                    acc.add("scatter", _size(_shape(upd)), where(op))
                return
            inp = op.operands[0]
            if any(_is_float(v) for v in op.operands):
                acc.add(_short(name), _size(_shape(inp)), where(op))
            return
        if name == "stablehlo.sort":
            self._check_body(op)
            shape = _shape(op.operands[0])
            d = _attr(op, "dimension")
            dim = int(_ir().IntegerAttr(d).value) if d is not None else len(shape) - 1
            n = shape[dim] if shape and -len(shape) <= dim < len(shape) else 1
            acc.add("sort", _size(shape) * _log2(n), where(op))
            return
        if name == "stablehlo.fft":
            shape = _shape(op.operands[0])
            lens = _int_list(op.attributes["fft_length"])
            acc.add("fft", 5 * _size(shape) * _log2(_size(lens)), where(op))
            return
        if name in ("stablehlo.cholesky", "stablehlo.triangular_solve"):
            shape = _shape(op.operands[0])
            if len(shape) >= 2:
                n = max(shape[-1], shape[-2])
                acc.add(_short(name), _size(shape[:-2]) * n**3, where(op))
            return
        if name == "stablehlo.map":
            self._check_body(op)
            body_ops = sum(1 for b in op.regions[0].blocks for o in b.operations if o.operation.name in ELEMENTWISE)
            out = op.results[0]
            if _is_float(out):
                acc.add("map", body_ops * _size(_shape(out)), where(op))
            return
        if name in ("func.call", "stablehlo.composite"):
            callee = _str_attr(op, "callee" if name == "func.call" else "decomposition")
            if callee is None:
                raise Uncountable("a call without a callee")
            acc.merge(self.function(callee, depth + 1), 1, False)
            return
        if name == "stablehlo.custom_call":
            self._custom_call(op, acc)
            return
        if name in BRANCHES:
            self._branches(op, acc, depth)
            return
        if name == "stablehlo.while":
            self._while(op, acc, depth)
            return
        if name == "sdy.manual_computation":  # a shard_map body: once per device (one here)
            acc.merge(self.sub(op.regions, depth), 1, False)
            return
        if name in HOST_TRANSFER_OPS:
            raise Uncountable("a transfer to or from the host")
        raise Uncountable("an operation the cost model does not know")

    # -- pieces
    def _check_body(self, op) -> None:
        """A combiner / comparator body may hold scalar arithmetic only."""
        for region in op.regions:
            for block in region.blocks:
                for o in block.operations:
                    o = o.operation
                    if o.name not in _BODY_OK or len(o.regions):
                        raise Uncountable(f"a body that holds {_short(o.name)}")
                    for r in o.results:
                        t = _tensor(r.type)
                        if t is not None and t.rank != 0:
                            raise Uncountable("a body that works on whole tensors")

    @staticmethod
    def _body_has_arithmetic(op) -> bool:
        return any(
            o.operation.name in ELEMENTWISE
            for region in op.regions
            for block in region.blocks
            for o in block.operations
        )

    def _custom_call(self, op, acc: _Acc) -> None:
        target = _str_attr(op, "call_target_name") or ""
        called = _attr(op, "called_computations")
        has_called = called is not None and len(_ir().ArrayAttr(called)) > 0
        if target in KERNEL_TARGETS:
            if has_called:
                raise Uncountable(f"a kernel call {target!r} that carries called computations")
            acc.kernels.append((target, True, where(op)))
            return
        if target in FLOP_FREE_TARGETS and not has_called:
            return
        raise Uncountable(f"an opaque custom call {target[:80]!r}")

    def _branches(self, op, acc: _Acc, depth: int) -> None:
        best: _Acc | None = None
        for region in op.regions:
            branch = self.sub([region], depth)
            acc.merge(branch, 1, True, flops=False)  # kernels (as conditional) and reasons
            if best is None or branch.flops > best.flops:
                best = branch
        if best is not None:  # the most expensive branch: fail closed
            for k, v in best.by_op.items():
                acc.by_op[k] = acc.by_op.get(k, 0) + v
            for s, v in best.sites.items():
                acc.sites[s] = acc.sites.get(s, 0) + v

    def _while(self, op, acc: _Acc, depth: int) -> None:
        trips = self.trip_count(op)
        cond_region, body_region = op.regions[0], op.regions[1]
        cond = self.sub([cond_region], depth)
        body = self.sub([body_region], depth)
        if trips is None:
            if body.flops or cond.flops or body.uncountable or cond.uncountable:
                acc.reason(f"while loop with a data-dependent trip count at {where(op)}")
            acc.merge(cond, 1, True)
            acc.merge(body, 1, True)
            return
        acc.merge(cond, trips + 1, False)
        acc.merge(body, trips, trips < 1)

    def trip_count(self, op) -> int | None:
        """The trip count of a ``fori_loop`` / ``scan``-shaped while loop, else None."""
        ir = _ir()
        cond_block = op.regions[0].blocks[0]
        body_block = op.regions[1].blocks[0]
        cond_ops = [o.operation for o in cond_block.operations]
        ret = cond_ops[-1] if cond_ops else None
        if ret is None or ret.name != "stablehlo.return" or len(ret.operands) != 1:
            return None
        cmp = ret.operands[0].owner
        cmp = getattr(cmp, "operation", cmp)
        if not isinstance(cmp, ir.Operation) or cmp.name != "stablehlo.compare":
            return None
        direction = str(_attr(cmp, "comparison_direction"))
        a, b = cmp.operands[0], cmp.operands[1]
        if direction.endswith("LT>"):
            counter, bound = a, b
        elif direction.endswith("GT>"):
            counter, bound = b, a
        else:
            return None
        upper = self._bound(op, bound, cond_block, body_block)
        if upper is None:
            return None
        counter = self._strip_convert(counter)
        if not isinstance(counter, ir.BlockArgument) or counter.owner != cond_block:
            return None
        k = counter.arg_number
        if k >= len(op.operands) or not _is_int_scalar(op.operands[k]):
            return None
        lower = _const_int(op.operands[k])
        if lower is None:
            return None
        body_ops = [o.operation for o in body_block.operations]
        bret = body_ops[-1] if body_ops else None
        if bret is None or bret.name != "stablehlo.return" or k >= len(bret.operands):
            return None
        inc = bret.operands[k].owner
        inc = getattr(inc, "operation", inc)
        if not isinstance(inc, ir.Operation) or inc.name != "stablehlo.add":
            return None
        x, y = inc.operands[0], inc.operands[1]
        step = None
        for arg, c in ((x, y), (y, x)):
            if isinstance(arg, ir.BlockArgument) and arg.owner == body_block and arg.arg_number == k:
                step = _const_int(c)
        if step is None or step < 1:
            return None
        return max(0, -(-(upper - lower) // step))

    def _bound(self, op, v, cond_block, body_block) -> int | None:
        """The loop bound as an integer: a constant expression, or a loop-invariant carried
        value (the body returns it unchanged) that starts as one (Pallas's interpreter)."""
        ir = _ir()
        v = self._strip_convert(v)
        if isinstance(v, ir.BlockArgument) and v.owner == cond_block:
            j = v.arg_number
            ops = [o.operation for o in body_block.operations]
            ret = ops[-1] if ops else None
            if ret is None or ret.name != "stablehlo.return" or j >= len(ret.operands) or j >= len(op.operands):
                return None
            carried = ret.operands[j]
            if not (isinstance(carried, ir.BlockArgument) and carried.owner == body_block and carried.arg_number == j):
                return None
            return _fold_int(op.operands[j])
        return _fold_int(v)

    @staticmethod
    def _strip_convert(v):
        ir = _ir()
        for _ in range(4):
            owner = getattr(v.owner, "operation", v.owner)
            if isinstance(owner, ir.Operation) and owner.name == "stablehlo.convert" and _is_int_scalar(v):
                v = owner.operands[0]
            else:
                break
        return v


def _census(module):
    """Every custom-call target in the module (reachable or not) and the host transfers."""
    calls: dict[str, int] = {}
    host: list[str] = []
    n = 0

    def visit(op, depth):
        nonlocal n
        for region in op.regions:
            for block in region.blocks:
                for o in block.operations:
                    o = o.operation
                    n += 1
                    if n > MAX_OPS or depth > 4 * MAX_DEPTH:
                        raise Uncountable("a program too large or too deep to read")
                    if o.name == "stablehlo.custom_call":
                        t = _str_attr(o, "call_target_name") or ""
                        calls[t] = calls.get(t, 0) + 1
                        if (t in HOST_CALLBACK_TARGETS or "callback" in t.lower()) and t not in host:
                            host.append(t)
                    elif o.name in HOST_TRANSFER_OPS and o.name not in host:
                        host.append(o.name)
                    visit(o, depth + 1)

    visit(module.operation, 0)
    return calls, host, n


def _aval(a) -> list:
    return [[int(d) if isinstance(d, int) else str(d) for d in a.shape], str(a.dtype.name)]


def _trivial(shardings) -> bool:
    for s in shardings or ():
        if s is None:
            continue
        try:
            if not s.is_replicated():
                return False
        except Exception:  # noqa: BLE001
            return False
    return True


def module_cost(text: str, top: int = TOP_N, max_ops: int | None = None) -> dict:
    """The walk over one StableHLO module given as text (``Exported.mlir_module()``).

    Returns ``custom_calls``, ``host_callbacks``, ``kernels``, ``outside_flops``, ``by_op``,
    ``top_outside``, ``uncountable``, ``ops`` (see :func:`artifact_facts`). A module of more
    than ``max_ops`` operations is counted and not walked further (its cost fields stay empty):
    the caller refuses it on the count alone."""
    from jax._src.interpreters import mlir  # deferred: as above

    out: dict = {
        "custom_calls": {},
        "host_callbacks": [],
        "kernels": {"total": 0, "unconditional": 0, "conditional": 0, "by_target": {}, "sites": []},
        "outside_flops": 0,
        "by_op": {},
        "top_outside": [],
        "uncountable": [],
        "ops": 0,
    }
    ctx = mlir.make_ir_context()
    with ctx, _ir().Location.unknown():
        try:
            module = _ir().Module.parse(text)
        except Exception as exc:  # noqa: BLE001
            out["uncountable"] = [f"the program could not be parsed ({type(exc).__name__})"]
            return out
        try:
            out["custom_calls"], out["host_callbacks"], out["ops"] = _census(module)
            if max_ops is not None and out["ops"] > max_ops:
                # the costly walk (~60 us an operation) would make the refusal a race with the
                # reader's CPU limit, which a slower machine loses (compile_timeout): the count
                # decides it, on any machine
                return out
            walker = _Walker(module)
            if walker.funcs.get("main") is None:
                out["uncountable"] = ["the program has no main function"]
                return out
            acc = walker.function("main", 0)
        except Uncountable as exc:
            out["uncountable"] = [str(exc)]
            return out
        except Exception as exc:  # noqa: BLE001 - never raise for a malformed program
            out["uncountable"] = [f"the program could not be walked ({type(exc).__name__})"]
            return out
    kernels = out["kernels"]
    for target, uncond, w in acc.kernels:
        kernels["total"] += 1
        kernels["unconditional" if uncond else "conditional"] += 1
        kernels["by_target"][target] = kernels["by_target"].get(target, 0) + 1
        if len(kernels["sites"]) < MAX_SITES:
            kernels["sites"].append({"target": target, "unconditional": uncond, "where": w})
    out["by_op"] = dict(sorted(acc.by_op.items(), key=lambda kv: -kv[1]))
    out["outside_flops"] = acc.flops
    sites = sorted(acc.sites.items(), key=lambda kv: -kv[1])[:top]
    out["top_outside"] = [{"primitive": p, "flops": f, "where": w} for (p, w), f in sites]
    out["uncountable"] = list(acc.uncountable)
    return out


def artifact_facts(exported, top: int = TOP_N, max_ops: int | None = None) -> dict:
    """Facts about a deserialized ``jax.export.Exported``, as plain JSON-ready data::

        {"in_avals": [[shape, dtype], ...], "out_avals": [...], "platforms": [...],
         "module_bytes": int, "nr_devices": int, "ordered_effects": [str], "unordered_effects":
         [str], "nontrivial_shardings": bool,
         "custom_calls": {target: count}      # every custom call in the module, reachable or not
         "host_callbacks": [target or op]     # calls back into Python / the host
         "kernels": {"total", "unconditional", "conditional", "by_target": {target: n},
                     "sites": [{"target", "unconditional", "where"}]}   # reachable from main
         "outside_flops": int, "by_op": {op: flops}, "top_outside": [{"primitive", "flops",
         "where"}], "uncountable": [reason], "ops": int}

    ``outside_flops`` counts every operation reachable from ``main`` outside the kernel calls
    (see the module docstring for the model). It is a lower bound of nothing and an upper
    bound of nothing when ``uncountable`` is non-empty: the caller must then refuse to trust
    it (``pallas_share.assess_artifact`` does). Never raises for a malformed program: what
    cannot be read is a reason in ``uncountable``. ``max_ops``: see :func:`module_cost`."""
    facts: dict = {
        "in_avals": [],
        "out_avals": [],
        "platforms": [],
        "module_bytes": 0,
        "nr_devices": 0,
        "ordered_effects": [],
        "unordered_effects": [],
        "nontrivial_shardings": False,
    }
    try:
        facts["in_avals"] = [_aval(a) for a in exported.in_avals]
        facts["out_avals"] = [_aval(a) for a in exported.out_avals]
        facts["platforms"] = [str(p) for p in exported.platforms]
        facts["module_bytes"] = len(exported.mlir_module_serialized)
        facts["nr_devices"] = int(exported.nr_devices)
        facts["ordered_effects"] = [str(e)[:200] for e in exported.ordered_effects]
        facts["unordered_effects"] = [str(e)[:200] for e in exported.unordered_effects]
        facts["nontrivial_shardings"] = not (
            _trivial(exported.in_shardings_hlo) and _trivial(exported.out_shardings_hlo)
        )
        text = exported.mlir_module()
    except Exception as exc:  # noqa: BLE001
        facts.update(module_cost("", top))
        facts["uncountable"] = [f"the artifact could not be read ({type(exc).__name__}: {str(exc)[:200]})"]
        return facts
    facts.update(module_cost(text, top, max_ops))
    return facts


def facts_from_bytes(serialized: bytes, top: int = TOP_N) -> dict:
    """:func:`artifact_facts` of a serialized artifact (``Exported.serialize()``'s bytes)."""
    import jax  # deferred: as above

    try:
        exported = jax.export.deserialize(bytearray(serialized))
    except Exception as exc:  # noqa: BLE001
        facts = module_cost("", top)
        facts["uncountable"] = [f"the artifact could not be deserialized ({type(exc).__name__})"]
        facts["module_bytes"] = len(serialized)
        return facts
    return artifact_facts(exported, top)

"""``python -m jaxbench``: the harness from the command line (no Django).

Commands::

    list                                   the workloads of the registry
    evaluate --workload W --kernel F.py [--profile small|full] [--json] [--no-require-pallas]
             [--fresh-baseline]
    baseline --workload W [--profile P] [--json]
    lower    --workload W --kernel F.py --platform tpu [--profile full] [--json]
    check-env [--json]

Exit codes: 0 success (a correct candidate; a baseline or lowering that worked), 1 the
candidate failed (any other outcome), 2 usage error (unknown workload, missing file, bad
option), 3 infrastructure error (the harness could not evaluate).

``evaluate`` keeps the XLA baseline it times alone (the guard's reference) in a disk cache
(``jaxbench.harness.baseline_cache``: ``JAXBENCH_CACHE_DIR``, ``JAXBENCH_BASELINE_CACHE_DAYS``),
so the next run on this host starts no child for it; ``--fresh-baseline`` measures it again.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import json
import os
import sys
import time
import traceback

from .record import BASELINE_NAMES, OUTCOME_LABELS, format_speedup, is_correct

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INFRA = 0, 1, 2, 3


class UsageError(Exception):
    pass


def _workload(name):
    from . import workloads  # deferred: each subcommand imports what it uses (list/check start without JAX)

    try:
        return workloads.get(name)
    except KeyError as exc:
        raise UsageError(str(exc.args[0] if exc.args else exc)) from None


def _read_kernel(path):
    if not path or not os.path.isfile(path):
        raise UsageError(f"kernel file not found: {path}")
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def _start_children(hardware):
    """The evaluation's timer and export child, started before this process imports JAX (their
    start-up, about half a second, then overlaps this process's); None where they cannot start
    (the harness starts its own, and reports why it cannot)."""
    from .sandbox import SandboxError, pair  # deferred: each subcommand imports what it uses

    try:
        return pair.start_pair(pair.platform_hint(hardware))
    except SandboxError:
        return None


def _check_hardware(hardware):
    from . import hardware as hw  # deferred: each subcommand imports what it uses (list/check start without JAX)

    if hardware:
        try:
            hw.get_target(hardware)
        except KeyError as exc:
            raise UsageError(exc.args[0]) from None


def _default_profile(hardware):
    # deferred: each subcommand imports what it uses (list/check start without JAX)
    from . import hardware as hw
    from . import harness

    _check_hardware(hardware)
    if hardware:
        return hw.get_target(hardware).profile
    return "small" if harness.platform_hint(None) == "cpu" else "full"


def _shape_text(specs):
    return " ".join("x".join(str(d) for d in s.shape) or "()" for s in specs)


def cmd_list(args):
    from . import workloads  # deferred: each subcommand imports what it uses (list/check start without JAX)

    rows = []
    for wl in workloads.all_workloads():
        row = {
            "id": wl.id,
            "slug": wl.slug,
            "source": wl.source,
            "model": wl.model,
            "category": wl.category,
            "expert": wl.expert,
            "level": wl.level,
        }
        for p in ("small", "full"):
            try:
                cases = wl.cases(p)
                row[p] = _shape_text(wl.input_specs(cases[0])) + (
                    f" (+{len(cases) - 1} configurations)" if len(cases) > 1 else ""
                )
            except Exception as exc:  # noqa: BLE001 - a broken module shows, not crashes
                row[p] = f"error: {type(exc).__name__}"
        rows.append(row)
    if args.json:
        print(json.dumps(rows, indent=1))
        return EXIT_OK
    cols = ["id", "slug", "source", "model", "category", "expert", "small", "full"]
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) if rows else len(c) for c in cols}
    widths["slug"] = min(widths["slug"], 36)
    widths["model"] = min(widths["model"], 18)
    widths["small"] = min(widths["small"], 40)
    widths["full"] = min(widths["full"], 48)
    print("  ".join(c.ljust(widths[c]) for c in cols))
    for r in rows:
        vals = {**r, "expert": "yes" if r["expert"] else ""}
        print("  ".join(str(vals[c])[: widths[c]].ljust(widths[c]) for c in cols))
    print(f"\n{len(rows)} workloads")
    return EXIT_OK


def _fmt_ms(s):
    return "-" if s is None else f"{s * 1e3:.4g} ms"


def _fmt_age(seconds):
    seconds = max(0.0, float(seconds))
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def print_record(rec, out=sys.stdout, now=None):
    w = out.write
    w(f"{rec['workload_slug']}  profile={rec['profile']}  hardware={rec['hardware']}  mode={rec['mode']}\n")
    w(f"  outcome      {rec['outcome']}" + (f" ({rec['error_category']})" if rec['error_category'] else "") + "\n")
    if rec.get("speedup") is not None:
        lo, hi = rec.get("speedup_ci") or (None, None)
        w(
            f"  speedup      {format_speedup(rec['speedup'], lo, hi)} "
            f"vs {BASELINE_NAMES[rec.get('baseline_program') or 'xla']} "
            f"({OUTCOME_LABELS.get(rec['outcome'], rec['outcome'])}; baseline "
            f"{rec.get('baseline_source')})" + ("   [held for review]" if rec.get("held_for_review") else "") + "\n"
        )
    t = rec.get("timing")
    if t:
        w(
            f"  kernel time  {_fmt_ms(t['median_s'])} median of {t['n']} ({t['method']}; "
            f"min {_fmt_ms(t['min_s'])}, spread {t['spread']:.2f}; wall {_fmt_ms(t.get('wall_median_s'))})\n"
        )
    if rec.get("baseline_median_s"):
        w(
            f"  XLA baseline {_fmt_ms(rec['baseline_median_s'])} beside the candidate"
            + (
                f" (alone earlier: {_fmt_ms(rec['cached_baseline_median_s'])})"
                if rec.get("cached_baseline_median_s")
                else ""
            )
            + "\n"
        )
    if rec.get("cached_baseline_from") == "disk" and rec.get("cached_baseline_measured_at"):
        age = (time.time() if now is None else now) - rec["cached_baseline_measured_at"]
        w(f"  (baseline alone from the disk cache, measured {_fmt_age(age)} ago; --fresh-baseline re-measures)\n")
    e = rec.get("errors")
    if e:
        c, x = e["candidate"], e["xla"]
        w(
            f"  error        vs the exact answer: candidate max abs {c['max_abs']:.3g} "
            f"({c['n_beyond_tol']} beyond tolerance), XLA max abs {x['max_abs']:.3g} "
            f"({x['n_beyond_tol']} beyond tolerance); {e['n_fail']} outside the allowance\n"
        )
    w(f"  pallas_call  {rec.get('has_pallas_call')}   callbacks {rec.get('host_callbacks') or 'none'}\n")
    if rec.get("pallas_share"):
        w(f"  work         {_share_line(rec['pallas_share'])}\n")
    if rec.get("message"):
        lines = rec["message"].splitlines()
        w("  message      " + lines[0] + "\n")
        for line in lines[1:]:
            w("               " + line + "\n")
    sb = rec.get("sandbox") or {}
    w(
        f"  sandbox      {sb.get('sandbox')}; uid {sb.get('host_uid')}; cgroup {sb.get('cgroup')}; "
        f"namespaces {','.join(sb.get('namespaces') or []) or 'none'}\n"
    )
    seeds = rec.get("seeds") or {}
    if seeds:
        w(f"  seeds        check {' '.join(seeds.get('check', []))}; timing {' '.join(seeds.get('timing', []))}\n")
    w(
        f"  versions     jax {rec.get('jax_version')}, jaxlib {rec.get('jaxlib_version')}, "
        f"harness {rec.get('harness_version')}\n"
    )
    ph = rec.get("phases") or {}
    w(
        "  phases       "
        + ", ".join(f"{k[:-2]} {v:.2f}s" for k, v in ph.items() if k.endswith("_s") and isinstance(v, float))
        + "\n"
    )


def cmd_evaluate(args):
    source = _read_kernel(args.kernel)
    _check_hardware(args.hardware)
    started = _start_children(args.hardware)
    try:
        from . import harness  # deferred: imports JAX, while the children start

        wl = _workload(args.workload)
        profile = args.profile or _default_profile(args.hardware)
        if profile not in wl.profiles:
            raise UsageError(f"unknown profile {profile!r}")
        if len(source.encode("utf-8", "replace")) > harness.MAX_SOURCE_BYTES:
            raise UsageError(f"kernel file over {harness.MAX_SOURCE_BYTES} bytes")
        rec = harness.evaluate(
            wl,
            source,
            profile=profile,
            hardware=args.hardware,
            require_pallas=not args.no_require_pallas,
            baseline_cache="fresh" if args.fresh_baseline else "disk",
            started=started,
        )
    finally:
        for child in started or ():
            child.close()  # a no-op for those the evaluation used (it closed them)
    if args.json:
        print(json.dumps(rec, indent=1))
    else:
        print_record(rec)
    return EXIT_OK if is_correct(rec) else EXIT_FAILED


def cmd_baseline(args):
    from . import harness  # deferred: each subcommand imports what it uses (list/check start without JAX)

    wl = _workload(args.workload)
    profile = args.profile or _default_profile(args.hardware)
    _check_hardware(args.hardware)
    if profile not in wl.profiles:
        raise UsageError(f"unknown profile {profile!r}")
    rec = harness.measure_baseline(wl, profile=profile, hardware=args.hardware)
    if args.json:
        print(json.dumps(rec, indent=1))
    else:
        t = rec["timing"]
        print(f"{wl.slug}  profile={profile}  hardware={rec['hardware']}")
        print(
            f"  XLA baseline {_fmt_ms(t['median_s'])} median of {t['n']} ({t['method']}; "
            f"min {_fmt_ms(t['min_s'])}, spread {t['spread']:.2f}; wall {_fmt_ms(t.get('wall_median_s'))})"
        )
        print(f"  versions     jax {rec['jax_version']}, harness {rec['harness_version']}")
    return EXIT_OK


def cmd_lower(args):
    from . import harness  # deferred: each subcommand imports what it uses (list/check start without JAX)

    source = _read_kernel(args.kernel)
    wl = _workload(args.workload)
    if args.profile not in wl.profiles:
        raise UsageError(f"unknown profile {args.profile!r}")
    rec = harness.lower_for_platform(wl, source, platform=args.platform, profile=args.profile)
    if args.json:
        print(json.dumps(rec, indent=1))
    else:
        status = "ok" if rec["ok"] else f"{rec['outcome']} ({rec['error_category']})"
        print(f"{wl.slug}  lowering for {args.platform} at {args.profile} shapes: {status}")
        print(f"  pallas_call  {rec['has_pallas_call']}")
        if rec.get("pallas_share"):
            print(f"  work         {_share_line(rec['pallas_share'])}")
        for line in (rec["message"] or "").splitlines():
            print("  " + line)
    return EXIT_OK if rec["ok"] else EXIT_FAILED


def _share_line(share: dict) -> str:
    from .verdict.pallas_share import (  # deferred: each subcommand imports what it uses (list/check start without JAX)
        largest,
        summary,
    )

    where = largest(share)
    return summary(share) + (f" (largest outside: {where})" if where else "")


def _device_lock_line(lock: dict) -> str:
    if not lock["exclusive"]:
        return f"device lock     not used (cpu children run side by side; {lock['path']} under the simulated device)"
    if lock["in_use"]:
        return f"device lock     {lock['path']}: in use, held by {lock['holder']} (check-env waits for it)"
    if lock["in_use"] is None:
        return f"device lock     {lock['path']}: {lock['holder']}"
    return f"device lock     {lock['path']}: free"


def cmd_check_env(args):
    from . import harness  # deferred: each subcommand imports what it uses (list/check start without JAX)
    from .sandbox import device  # deferred: as above

    # before the probe, which opens the device and so waits for its lock
    lock = device.state(harness.platform_hint(None))
    if not args.json:
        print(_device_lock_line(lock), flush=True)
    env = harness.probe_environment()
    env["device_lock"] = lock
    if args.json:
        print(json.dumps(env, indent=1))
        return EXIT_OK
    print(f"hardware        {env['hardware']} ({env['device_kind']}, platform {env['platform']})")
    print(f"profile         {env['profile']}")
    print(f"jax / jaxlib    {env['jax_version']} / {env['jaxlib_version']} (child), harness {env['harness_version']}")
    print(
        f"interpret mode  {'active: Pallas TPU kernels run under force_tpu_interpret_mode' if env['interpret_mode'] else 'off (kernels compiled for the device)'}"
    )
    missing = env["missing_packages"]
    print(f"packages        {'MISSING ' + ', '.join(missing) if missing else 'all the harness needs beside JAX'}")
    sb = env["sandbox"]
    print(f"sandbox         {sb.get('mode')}  ({sb.get('bubblewrap_version') or 'no bubblewrap'})")
    for key in (
        "namespaces",
        "disable_userns",
        "die_with_parent",
        "new_session",
        "cap_drop_all",
        "minimal_filesystem",
        "clearenv",
        "private_tmp",
        "unprivileged_uid",
        "no_new_privs",
        "cgroup",
        "cgroup_pids_max",
        "cgroup_memory_max",
        "rlimits",
        "work_dir_quota",
        "phase_timeouts",
        "process_group_kill",
        "device_lock",
        "simulated_device",
        "gpu_preallocate",
        "device_nodes",
    ):
        val = sb.get(key)
        if isinstance(val, list):
            val = ", ".join(val) or "none"
        print(f"  {key:<20} {val}")
    if sb.get("launcher_errors"):
        print(f"  launcher errors      {sb['launcher_errors']}")
    return EXIT_OK


def build_parser():
    p = argparse.ArgumentParser(
        prog="python -m jaxbench",
        description="JAXBench harness: evaluate Pallas kernels against the XLA baselines in a sandbox.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("list", help="list the workloads")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_list)
    s = sub.add_parser("evaluate", help="evaluate a kernel file")
    s.add_argument("--workload", required=True, help="ID, slug or public name (12p, 12p-rmsnorm)")
    s.add_argument("--kernel", required=True, help="the candidate .py file")
    s.add_argument("--profile", choices=("small", "full"))
    s.add_argument("--hardware", help="target slug (default: detected)")
    s.add_argument("--json", action="store_true")
    s.add_argument("--no-require-pallas", action="store_true", help="accept programs without a pallas_call")
    s.add_argument(
        "--fresh-baseline",
        action="store_true",
        help="time the XLA baseline alone again instead of reusing this host's cached figure (and cache the new one)",
    )
    s.set_defaults(fn=cmd_evaluate)
    s = sub.add_parser("baseline", help="time the XLA baseline")
    s.add_argument("--workload", required=True)
    s.add_argument("--profile", choices=("small", "full"))
    s.add_argument("--hardware")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_baseline)
    s = sub.add_parser("lower", help="lower a kernel for a platform without running it")
    s.add_argument("--workload", required=True)
    s.add_argument("--kernel", required=True)
    s.add_argument("--platform", default="tpu", choices=("tpu", "cuda", "rocm", "cpu"))
    s.add_argument("--profile", default="full", choices=("small", "full"))
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_lower)
    s = sub.add_parser("check-env", help="hardware, versions and sandbox protections")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_check_env)
    return p


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from .sandbox.options import (
        SandboxError,  # deferred: each subcommand imports what it uses (list/check start without JAX)
    )

    try:
        return args.fn(args)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # output piped into `head` and closed early
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - a harness bug is an infrastructure failure
        # the harness's own error can only come from a harness this command imported (looked
        # up, not imported: evaluate starts its children before JAX is imported)
        settings = sys.modules.get("jaxbench.harness.settings")
        if isinstance(exc, (SandboxError, *((settings.InfrastructureError,) if settings else ()))):
            print(f"infrastructure error: {exc}", file=sys.stderr)
            return EXIT_INFRA
        traceback.print_exc(limit=5)
        print(f"infrastructure error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_INFRA


def run() -> None:
    """The ``jaxbench`` command's process: :func:`main`, then an exit without Python's
    finalisation. After a command that imported JAX, tearing the interpreter down (XLA's client,
    its thread pools, every module's objects) took 0.2-0.3 s of a 3 s ``evaluate`` here. The
    exit handlers still run (the sandbox's own closes any child left; logging flushes), then
    the output is flushed and the OS reclaims the rest, as each child ends (``child_main``)."""
    code = main()
    try:
        atexit._run_exitfuncs()  # what sys.exit would run first: CPython's registered handlers
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed pipe: nothing left to say
                stream.flush()
        os._exit(code)

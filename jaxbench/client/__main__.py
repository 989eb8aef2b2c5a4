"""python -m jaxbench.client — submit kernels and agent traces to a JAXBench Portal, follow their
evaluation, read the leaderboard, and validate traces offline.

Configuration: --url/--token or the environment variables JAXBENCH_URL and JAXBENCH_TOKEN.
Exit codes: 0 ok, 1 invalid input (rejected), 2 usage or configuration, 3 authentication or
permission, 4 not found, 5 portal unreachable or failing, 6 --wait timed out, 7 throttled.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from jaxbench import environment, limits, traces
from jaxbench.client import __version__, commands, test_runs
from jaxbench.client.http import EXIT_USAGE, ClientError, Portal

EPILOG = """examples:
  export JAXBENCH_URL=https://portal.example JAXBENCH_TOKEN=jxb_...
  python -m jaxbench.client submit-kernels ./outputs --hardware tpu-v6e --method Autocomp --model "Gemini 3 Flash" --wait
  python -m jaxbench.client validate-trace run.jsonl
  python -m jaxbench.client submit-trace run.jsonl --wait
  python -m jaxbench.client status 42 --wait
  python -m jaxbench.client test-run 12p my_rmsnorm.py --hardware cpu
  python -m jaxbench.client leaderboard --hardware tpu-v6e

exit codes: 0 ok, 1 invalid input, 2 usage/configuration, 3 authentication/permission,
            4 not found, 5 portal unreachable or failing, 6 --wait timed out, 7 throttled"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m jaxbench.client",
        description=__doc__.split("\n\n")[0],
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--url", default=environment.get("JAXBENCH_URL"), help="portal URL (default: $JAXBENCH_URL)")
    p.add_argument("--token", default=environment.get("JAXBENCH_TOKEN"), help="API token (default: $JAXBENCH_TOKEN)")
    p.add_argument("--json", action="store_true", help="machine-readable JSON on stdout")
    p.add_argument("--timeout-http", type=float, default=300.0, metavar="S", help="per-request timeout (300 s)")
    p.add_argument("--retries", type=int, default=3, help="retries of idempotent requests (3)")
    p.add_argument("--version", action="version", version=f"jaxbench-client {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def waiting(sp):
        sp.add_argument("--wait", action="store_true", help="follow the evaluation with a progress bar, then summarise")
        sp.add_argument("--interval", type=float, default=2.0, help="seconds between polls (2)")
        sp.add_argument("--timeout", type=float, default=None, help="give up waiting after this many seconds")

    k = sub.add_parser(
        "submit-kernels",
        help="submit a directory of kernel files (or .py files, or a .zip)",
        description="Zips the .py files (folders kept: 12p_RMSNorm/optimized.py works) and "
        "submits them. Files are named by workload ID, slug or public folder name.",
    )
    k.add_argument("paths", nargs="+", metavar="DIR", help="directory, .py files or one .zip")
    k.add_argument(
        "--hardware", default=environment.get("JAXBENCH_HARDWARE"), help="hardware target, e.g. cpu, tpu-v6e"
    )
    k.add_argument("--method", required=True, help="e.g. Autocomp, Iterative refinement, Hand-written")
    k.add_argument("--model", help="the model that wrote the kernels")
    k.add_argument("--framework", help="agent framework and version")
    k.add_argument("--description")
    k.add_argument("--link", help="paper, code or write-up URL")
    k.add_argument(
        "--selection",
        choices=traces.ONE_SAMPLE_SELECTIONS,
        help="how these files were chosen: single_attempt, or best_at_k (picked among k by your own "
        "selector, without any verdict of the portal; name it with --selector); default: undeclared",
    )
    k.add_argument("--selector", help="with --selection best_at_k: how each file was picked")
    k.add_argument("--team", help="team slug (needed when you are in several teams)")
    k.add_argument("--upload-key", help="idempotency key (default: a hash of the files and options; '' for none)")
    k.add_argument("--publish", action="store_true", help="publish right away")
    waiting(k)

    def trajectory_args(p) -> None:
        g = p.add_argument_group(
            "ATIF trajectories and ADK sessions", "what the document does not say itself (the upload's parameters)"
        )
        g.add_argument("--hardware", help="hardware target slug (else the document's extra.jaxbench.hardware)")
        g.add_argument("--workload", help="the workload of kernels whose file path does not name one")
        g.add_argument("--method", help="the method's name (else the agent's name)")
        g.add_argument("--model", help="the model (else the document's)")

    t = sub.add_parser(
        "submit-trace",
        help="validate and upload an agent trace: jaxbench-trace/1 JSON Lines, an ATIF trajectory or an ADK session",
    )
    t.add_argument("file")
    t.add_argument("--team", help="team slug (needed when you are in several teams)")
    t.add_argument("--upload-key", help="idempotency key (default: the file's SHA-256; '' for none)")
    t.add_argument("--no-validate", action="store_true", help="skip the local check before uploading")
    t.add_argument("--offline", action="store_true", help="check locally without reading the portal's catalogue")
    t.add_argument("--publish", action="store_true", help="publish right away")
    trajectory_args(t)
    waiting(t)

    s = sub.add_parser("status", help="evaluation progress and a per-workload summary of a submission")
    s.add_argument("id", type=int)
    waiting(s)

    v = sub.add_parser(
        "validate-trace", help="check a trace, ATIF trajectory or ADK session with the portal's own rules (no upload)"
    )
    v.add_argument("file", help="the trace, or - for stdin")
    v.add_argument(
        "--offline", action="store_true", help="do not read workload names and hardware targets from the portal"
    )
    trajectory_args(v)

    lb = sub.add_parser("leaderboard", help="print the leaderboard")
    lb.add_argument("--hardware")
    lb.add_argument("--set", help="workload set: all, production, kernelbench, expert")
    lb.add_argument("--n", help="sample budget N per workload (an integer or 'all')")
    lb.add_argument("--sort", help="sort key, e.g. geomean, -solved")
    lb.add_argument("--param", action="append", metavar="KEY=VALUE", help="another query parameter")

    tr = sub.add_parser(
        "test-run",
        help="evaluate kernels privately: each verdict and where they would rank, not on the board",
        description=f"A test run: at most {limits.TEST_RUN_MAX_KERNELS} kernels evaluated by the portal's harness under "
        "its rules, seen by you alone (not your team, the board, the API's lists or exports), deleted after "
        f"{limits.TEST_RUN_DAYS} days unless promoted (test-run-promote). Follows the evaluation, then prints each "
        "verdict and where it would rank on the board.",
    )
    tr.add_argument(
        "specs",
        nargs="+",
        metavar="WORKLOAD FILE",
        help="workload and file pairs (12p kernel.py), or one FILE named by its workload",
    )
    tr.add_argument(
        "--hardware", default=environment.get("JAXBENCH_HARDWARE"), help="hardware target, e.g. cpu, tpu-v6e"
    )
    tr.add_argument("--team", help="the team you would submit it for (needed when you are in several teams)")
    tr.add_argument("--no-wait", action="store_true", help="upload and return; follow it with test-run-status")
    tr.add_argument("--interval", type=float, default=2.0, help="seconds between polls (2)")
    tr.add_argument("--timeout", type=float, default=None, help="give up waiting after this many seconds")

    ts = sub.add_parser("test-run-status", help="a test run's progress, verdicts and where it would rank")
    ts.add_argument("id", type=int)
    waiting(ts)
    sub.add_parser("test-runs", help="list your test runs")
    td = sub.add_parser("test-run-delete", help="delete a test run and its results")
    td.add_argument("id", type=int)
    tp = sub.add_parser(
        "test-run-promote",
        help="make a test run a submission of its team (same kernels and verdicts, nothing measured again)",
    )
    tp.add_argument("id", type=int)
    tp.add_argument("--method", required=True, help="e.g. Autocomp, Iterative refinement, Hand-written")
    tp.add_argument("--model", help="the model that wrote the kernels")
    tp.add_argument("--framework", help="agent framework and version")
    tp.add_argument("--description")
    tp.add_argument("--link", help="paper, code or write-up URL")
    tp.add_argument("--selection", choices=traces.ONE_SAMPLE_SELECTIONS, help="single_attempt or best_at_k")
    tp.add_argument("--selector", help="with --selection best_at_k: how each file was picked")
    tp.add_argument("--publish", action="store_true", help="publish right away (default: private to the team)")

    sub.add_parser("workloads", help="list the workloads")
    sub.add_parser("whoami", help="the token's user and teams")
    for name in ("publish", "withdraw"):
        sp = sub.add_parser(name, help=f"{name} a submission of your team")
        sp.add_argument("id", type=int)
    return p


# each takes (args, portal); the portal is None only for an offline validate-trace
COMMANDS: dict[str, Callable[..., int]] = {
    "submit-kernels": commands.submit_kernels,
    "submit-trace": commands.submit_trace,
    "status": commands.status,
    "validate-trace": commands.validate_trace,
    "leaderboard": commands.leaderboard,
    "workloads": commands.workloads,
    "whoami": commands.whoami,
    "publish": commands.publish,
    "withdraw": commands.publish,
    "test-run": test_runs.test_run,
    "test-run-status": test_runs.test_run_status,
    "test-runs": test_runs.test_runs,
    "test-run-delete": test_runs.test_run_delete,
    "test-run-promote": test_runs.test_run_promote,
}


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "validate-trace" and (args.offline or not args.url):
            portal = None
        else:
            portal = Portal(args.url, args.token, timeout=args.timeout_http, retries=max(0, args.retries))
        return COMMANDS[args.command](args, portal)
    except ClientError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        if exc.errors:
            commands.show_errors(exc.errors)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())

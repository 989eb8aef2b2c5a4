"""The client's test-run commands (docs/DESIGN.md, "Test runs"): evaluate a few kernels privately,
follow the evaluation, print each verdict and where it would rank; list, delete and promote test
runs. Each returns an exit code; output goes to stdout, progress and diagnostics to stderr."""

from __future__ import annotations

import json
import pathlib

from jaxbench import limits, record
from jaxbench.client.commands import err, follow, show_errors
from jaxbench.client.http import EXIT_OK, EXIT_TIMEOUT, EXIT_USAGE, ClientError, Portal
from jaxbench.client.tables import table

MAX_FAILURE_LINES = 20


def _read(path: str) -> bytes:
    p = pathlib.Path(path)
    if not p.is_file():
        raise ClientError(f"no such file: {path}", EXIT_USAGE)
    return p.read_bytes()


def kernels_from_args(specs: list[str]) -> list[tuple[str | None, pathlib.Path]]:
    """``WORKLOAD FILE [WORKLOAD FILE ...]`` -> [(workload, file)]; one FILE alone is named by
    its workload (12p.py, 12p_RMSNorm.py): its workload is None."""
    if len(specs) == 1:
        return [(None, pathlib.Path(specs[0]))]
    if len(specs) % 2:
        raise ClientError(
            "give WORKLOAD FILE pairs (test-run 12p kernel.py 8p gemm.py), or one FILE named by its workload",
            EXIT_USAGE,
        )
    pairs: list[tuple[str | None, pathlib.Path]] = [(w, pathlib.Path(f)) for w, f in zip(specs[::2], specs[1::2])]
    if len(pairs) > limits.TEST_RUN_MAX_KERNELS:
        raise ClientError(
            f"{len(pairs)} kernels: a test run takes at most {limits.TEST_RUN_MAX_KERNELS}; "
            "submit more with submit-kernels",
            EXIT_USAGE,
        )
    return pairs


def test_run(args, portal: Portal) -> int:
    """Upload, then (unless --no-wait) follow the evaluation and print the verdicts."""
    portal.require_token()
    if not args.hardware:
        raise ClientError(
            "name the hardware target with --hardware (or JAXBENCH_HARDWARE), e.g. cpu or tpu-v6e", EXIT_USAGE
        )
    pairs = kernels_from_args(args.specs)
    files = [("files", (path.name, _read(str(path)), "text/x-python")) for _, path in pairs]
    data: dict = {"hardware": args.hardware, "workloads": [w or "" for w, _ in pairs]}
    if args.team:
        data["team"] = args.team
    err(f"Uploading {len(files)} kernel{'s' if len(files) != 1 else ''} for a test run on {args.hardware} ...")
    try:
        # not retried: a test run has no upload key, and a retry after a lost answer would make two
        run = portal.post("test-runs/", data=data, files=files)
    except ClientError as exc:
        if not exc.errors:
            raise
        err(f"Rejected: {exc.message}")
        show_errors(exc.errors)
        raise ClientError("nothing was stored", exc.exit_code) from None
    err(f"Test run #{run['id']} ({run['label']}): {run['links']['page']}")
    if args.no_wait:
        if args.json:
            print(json.dumps(run, indent=2))
        else:
            print(
                f"Test run #{run['id']} queued; follow it with: python -m jaxbench.client test-run-status {run['id']} --wait"
            )
        return EXIT_OK
    return wait_and_print(args, portal, run)


def wait_and_print(args, portal: Portal, run: dict) -> int:
    rid = run["id"]
    fetches = iter([run])  # the first status is the one in hand

    def fetch() -> dict:
        return next(fetches, None) or portal.get(f"test-runs/{rid}/")

    done = follow(args, fetch, lambda r: r["status"], f"test run #{rid}", f"test-run-status {rid} --wait")
    if done is None:
        return EXIT_TIMEOUT
    print_test_run(args, done)
    return EXIT_OK


def _x(v) -> str:
    return "-" if v is None else f"{v:.2f}x"


def _neighbour(r: dict | None, where: str) -> str:
    if not r:
        return ""
    return f"  {where}: #{r['rank']} {r['team']} · {r['method']}  {_x(r['geomean'])}\n"


def print_test_run(args, run: dict) -> None:
    if args.json:
        print(json.dumps(run, indent=2))
        return
    st = run["status"]
    print(
        f"Test run #{run['id']} ({run['label']}) on {run['hardware']}: {st['done']}/{st['total']} evaluated"
        f"{' (finished)' if st['finished'] else ''}; {run['state']['label']}"
    )
    rows = run["verdicts"]
    if rows:
        print()
        print(
            table(
                ["workload", "file", "verdict", "speedup [95%]"],
                [
                    [
                        v["workload"],
                        v["filename"],
                        v["outcome"] if v["finished"] else v["status"],
                        v["speedup_text"] + (" (held for review)" if v["held_for_review"] else "") or "-",
                    ]
                    for v in rows
                ],
            )
        )
    failed = [v for v in rows if v["finished"] and v["outcome"] not in record.CORRECT_OUTCOMES]
    if failed:
        print("\nWhy:")
        for v in failed[:MAX_FAILURE_LINES]:
            print(f"  {v['workload']} {v['outcome']}: {record.message_head(v['message'], 1)}")
            where = record.message_where(v["message"])
            if where:
                print(f"      at {where[-1]}")
    if any(v["held_for_review"] for v in rows):
        print(
            "\nHeld for review (TRUST.md 6): not counted until staff accept it; a test run is not reviewed, "
            "a submission is."
        )
    p = run.get("preview")
    if p:
        tie = " (tied: its interval overlaps a neighbour's)" if p["tied"] else ""
        print(
            f"\nPreview, only you see it: would rank #{p['rank']} of {p['of']}{tie} on {p['board']}\n"
            f"{_neighbour(p['above'], 'above')}"
            f"  this test run: {_x(p['row']['geomean'])} floored geomean, "
            f"{p['row']['solved']:g}/{p['row']['set_size']} solved\n"
            f"{_neighbour(p['below'], 'below')}",
            end="",
        )
    elif st["finished"]:
        print("\nNot ranked: a kernel has no verdict the board would count.")
    print(
        f"\nIt is deleted at {run['expires_at']} unless promoted: python -m jaxbench.client test-run-promote "
        f"{run['id']} --method METHOD [--publish]"
    )


def test_run_status(args, portal: Portal) -> int:
    portal.require_token()
    run = portal.get(f"test-runs/{args.id}/")
    if args.wait:
        return wait_and_print(args, portal, run)
    print_test_run(args, run)
    return EXIT_OK


def test_runs(args, portal: Portal) -> int:
    portal.require_token()
    runs = portal.get("test-runs/")
    if args.json:
        print(json.dumps(runs, indent=2))
        return EXIT_OK
    if not runs:
        print("No test runs.")
        return EXIT_OK
    print(f"Your test runs ({runs[0]['label']}):")
    print(
        table(
            ["#", "hardware", "team", "kernels", "state", "deleted at"],
            [[r["id"], r["hardware"], r["team"], r["kernels"], r["state"]["label"], r["expires_at"]] for r in runs],
        )
    )
    return EXIT_OK


def test_run_delete(args, portal: Portal) -> int:
    portal.require_token()
    portal.request("DELETE", f"test-runs/{args.id}/")
    print(f"Test run #{args.id} deleted with its results.")
    return EXIT_OK


def test_run_promote(args, portal: Portal) -> int:
    portal.require_token()
    body = {
        "method": args.method,
        "model": args.model or "",
        "framework": args.framework or "",
        "description": args.description or "",
        "link": args.link or "",
        "publish": bool(args.publish),
    }
    if args.selection:
        body["selection"] = args.selection
    if args.selector:
        body["selector"] = args.selector
    try:
        sub = portal.post(f"test-runs/{args.id}/promote/", json=body)
    except ClientError as exc:
        if not exc.errors:
            raise
        err(f"Rejected: {exc.message}")
        show_errors(exc.errors)
        raise ClientError("the test run is unchanged", exc.exit_code) from None
    state = "published" if sub.get("is_public") else f"private to {sub.get('team')} until you publish it"
    if args.json:
        print(json.dumps(sub, indent=2))
    else:
        print(
            f"Test run #{args.id} is now submission #{sub['id']} ({state}): its kernels and verdicts are kept, "
            f"nothing is measured again.\n  {sub.get('links', {}).get('page', '')}"
        )
    return EXIT_OK


__all__ = ["test_run", "test_run_delete", "test_run_promote", "test_run_status", "test_runs"]

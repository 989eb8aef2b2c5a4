import json
import time

from django.core.management.base import BaseCommand

from evaluator.actors import send_ping
from evaluator.health import status


class Command(BaseCommand):
    help = "Show the broker, the queues with their depth, and the live workers."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true")
        parser.add_argument("--ping", metavar="QUEUE", help="send a ping through QUEUE and wait for a worker to answer")
        parser.add_argument("--timeout", type=float, default=30)

    def handle(self, *args, **opts):
        if opts["ping"]:
            ping = send_ping(opts["ping"])
            deadline = time.monotonic() + opts["timeout"]
            while time.monotonic() < deadline:
                ping.refresh_from_db()
                if ping.answered_at:
                    rtt = (ping.answered_at - ping.sent_at).total_seconds()
                    self.stdout.write(
                        self.style.SUCCESS(f"{opts['ping']}: answered by {ping.answered_by} in {rtt:.2f}s")
                    )
                    return
                time.sleep(0.2)
            self.stderr.write(f"{opts['ping']}: no answer within {opts['timeout']}s")
            raise SystemExit(1)
        st = status()
        if opts["json"]:
            self.stdout.write(json.dumps(st, indent=2))
            return
        self.stdout.write(
            f"broker: {st['broker']} — {'reachable' if st['reachable'] else 'UNREACHABLE ' + st['error']}"
        )
        for q in st["queues"]:
            self.stdout.write(
                f"  {q['name']:<28} depth={q['depth']!s:<6} queued={q['queued']:<5} running={q['running']:<4} workers={q['workers']}"
            )
        for w in st["workers"]:
            self.stdout.write(
                f"  worker {w['name']} [{w['hardware']}] {','.join(w['queues'])} last seen {w['last_seen_at']}"
            )
            for r in w["running"]:
                what = (
                    "a private test run" if r["test_run"] else f"#{r['submission']} {r['workload']} sample {r['index']}"
                )
                self.stdout.write(f"    runs {what} ({r['stage']}, {r['lane']}, {r['elapsed_s']} s)")
            for t in w["other_tasks"]:
                self.stdout.write(f"    runs {t['actor']}({', '.join(map(str, t['args']))}) on {t['queue']}")
        if not st["workers"]:
            self.stdout.write("  no live worker")

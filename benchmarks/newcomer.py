"""A newcomer's first hour, measured: a fresh clone, ``make run``, then as a new user would in a
browser (Debian's Chromium, 1280x800): sign up, a team, an API token, and one kernel each by the
web form, the REST API and the CLI while the demo is running. Prints the figures (seconds from
``make run`` to the first page, from each upload to the queue position the portal shows and to
its first verdict) and saves screenshots under ``artifacts/screenshots/newcomer-*.png``.

    .venv/bin/python benchmarks/newcomer.py [--clone /tmp/jaxbench-newcomer] [--port 8123]

Needs the test packages (Playwright's driver) in the running interpreter; the clone gets its own
``make run`` (its own .venv and var/). Asserts nothing; stops the portal at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHOTS = ROOT / "artifacts" / "screenshots"
EXAMPLE = ROOT / "jaxbench" / "kernels" / "examples" / "12p-rmsnorm.py"
PASSWORD = "Newcomer-pass-2026!"


def http(url, token=None, data=None, timeout=20):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if data is not None:
        headers["Content-Type"] = "application/json"
        data = json.dumps(data).encode()
    req = urllib.request.Request(url, data=data, headers=headers)
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, r.read()


def wait_for(pred, timeout, step=1.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return None


def status(base, token, sid):
    _, body = http(f"{base}/api/v1/submissions/{sid}/status/", token)
    return json.loads(body)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clone", default="/tmp/jaxbench-newcomer")
    ap.add_argument("--port", type=int, default=8123)
    ap.add_argument("--verdict-timeout", type=float, default=1800)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    clone = pathlib.Path(args.clone)
    shutil.rmtree(clone, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    base = f"http://127.0.0.1:{args.port}"
    log = open(clone / "make-run.log", "w")
    t0 = time.monotonic()
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("JAXBENCH_", "DJANGO_", "DATABASE_URL", "DRAMATIQ_"))
    }
    env["JAXBENCH_BIND"] = f"127.0.0.1:{args.port}"
    run = subprocess.Popen(
        ["make", "run"], cwd=clone, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
    )
    figures: dict = {}
    try:

        def up():
            try:
                return http(base + "/", timeout=5)[0] == 200
            except OSError:
                return False

        if not wait_for(up, 900, 2):
            raise SystemExit(f"the portal did not answer within 15 minutes; see {clone / 'make-run.log'}")
        figures["make run -> first page (s)"] = round(time.monotonic() - t0, 1)
        SHOTS.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(base + "/")
            page.screenshot(path=str(SHOTS / "newcomer-home.png"))
            page.goto(base + "/accounts/signup/")
            page.fill("#id_username", "newcomer")
            page.fill("#id_email", "newcomer@example.org")
            page.fill("#id_password1", PASSWORD)
            page.fill("#id_password2", PASSWORD)
            page.click("form.card button[type=submit]")
            page.wait_for_url("**/account/")
            page.click("a[href='/teams/new/']")
            page.fill("#id_name", "Newcomer Kernels")
            page.click("form.card button[type=submit]")
            page.wait_for_url("**/teams/newcomer-kernels/")
            page.goto(base + "/account/")
            page.fill("#id_name", "laptop")
            page.click("form[action='/account/tokens/new/'] button[type=submit]")
            token = page.inner_text("#new-token").strip()

            # 1. the web form
            page.goto(base + "/submit/")
            page.fill("#id_method", "Hand-written (form)")
            page.fill("#id_model", "Human")
            page.set_input_files("#id_file_12p", str(EXAMPLE))
            t_form = time.monotonic()
            page.click("#kernel-form button[type=submit]")
            page.wait_for_url("**/submissions/*/")
            sid_form = int(re.search(r"/submissions/(\d+)/", page.url).group(1))
            page.screenshot(path=str(SHOTS / "newcomer-submission-form.png"), full_page=False)

            # 2. the REST API
            t_api = time.monotonic()
            code = EXAMPLE.read_text() + "\n# by the API\n"
            _, body = http(
                base + "/api/v1/submissions/",
                token,
                {
                    "team": "newcomer-kernels",
                    "hardware": "cpu",
                    "method": "Hand-written (API)",
                    "kernels": {"12p": code},
                },
            )
            sid_api = json.loads(body)["id"]

            # 3. the CLI, exactly as the README writes it
            kdir = clone / "newcomer-kernels"
            kdir.mkdir(exist_ok=True)
            (kdir / "12p.py").write_text(EXAMPLE.read_text() + "\n# by the CLI\n")
            t_cli = time.monotonic()
            out = subprocess.run(
                [
                    str(clone / ".venv/bin/python"),
                    "-m",
                    "jaxbench.client",
                    "--url",
                    base,
                    "--token",
                    token,
                    "submit-kernels",
                    str(kdir),
                    "--hardware",
                    "cpu",
                    "--method",
                    "Hand-written (CLI)",
                ],
                cwd=clone,
                capture_output=True,
                text=True,
                timeout=120,
            )
            m = re.search(r"submission #(\d+)", out.stdout + out.stderr)
            sid_cli = int(m.group(1)) if m else None
            figures["CLI output"] = (out.stdout + out.stderr).strip().splitlines()[:3]

            for label, sid in (("form", sid_form), ("API", sid_api), ("CLI", sid_cli)):
                if sid is None:
                    figures[f"{label}: submission"] = "not created"
                    continue
                st = status(base, token, sid)
                q = st.get("queue") or {}
                figures[f"{label}: queue shown at upload"] = (
                    {k: q.get(k) for k in ("text", "position", "start_in_s", "finish_in_s")}
                    if q
                    else "none (already final: reused?)"
                )
            for label, sid, t in (("form", sid_form, t_form), ("API", sid_api, t_api), ("CLI", sid_cli, t_cli)):
                if sid is None:
                    continue
                done = wait_for(lambda sid=sid: status(base, token, sid).get("finished"), args.verdict_timeout, 5)
                figures[f"{label}: upload -> verdict (s)"] = round(time.monotonic() - t, 1) if done else "timed out"
                st = status(base, token, sid)
                figures[f"{label}: outcomes"] = st.get("outcomes")
            page.goto(f"{base}/submissions/{sid_form}/")
            page.screenshot(path=str(SHOTS / "newcomer-verdict.png"))
            page.goto(base + "/leaderboard/?hardware=cpu")
            page.screenshot(path=str(SHOTS / "newcomer-leaderboard-1280.png"))
            browser.close()
    finally:
        os.killpg(run.pid, signal.SIGINT)
        try:
            run.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)
    for k, v in figures.items():
        print(f"{k}: {v}")
    print(f"screenshots: {', '.join(sorted(str(p.relative_to(ROOT)) for p in SHOTS.glob('newcomer-*.png')))}")


if __name__ == "__main__":
    sys.exit(main())

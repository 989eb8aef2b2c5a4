# expect: rejected no_pallas_call
# Isolation probe: tries to write outside its work dir (the test substitutes host paths).
import json
import os

TARGETS = ["/etc/jaxbench_pwned", "/usr/lib/jaxbench_pwned", "/in/jaxbench_pwned",
           "/site/jax/jaxbench_pwned", "/harness/jaxbench_pwned", "/proc/sys/kernel/hostname"]
results = {}
for path in TARGETS:
    try:
        with open(path, "a") as f:
            f.write("pwned\n")
        results[path] = "written"
    except OSError as exc:
        results[path] = type(exc).__name__
with open("inside_work_dir.txt", "w") as f:   # allowed: the fresh work dir
    f.write("ok")
results["cwd"] = os.getcwd()
print("PROBE-WRITE " + json.dumps(results), flush=True)


def workload(x, scale):
    return x * scale

# expect: rejected no_pallas_call
# Probe: looks for the portal database files and prints their first bytes.
import glob, os
import jax.numpy as jnp

found = {}
for pattern in ("/work/*/var/*.sqlite3", "/work/*/var/test/*.sqlite3", "/tmp/*/var/*.sqlite3", "/tmp/*.sqlite3",
                "/root/*.sqlite3", "/var/lib/postgresql/*/main/PG_VERSION", "/var/lib/redis/*", "/*"):
    for path in glob.glob(pattern)[:50]:
        try:
            with open(path, "rb") as f:
                found[path] = f.read(16).hex()
        except OSError as exc:
            found[path] = type(exc).__name__
print("PROBE-DB-FILES", found, flush=True)


def workload(x, scale):
    return x

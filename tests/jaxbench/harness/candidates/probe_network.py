# expect: rejected no_pallas_call
# Isolation probe: tries to reach a database, a broker and the test's own listener.
import json
import socket

PORTS = [5432, 6379]  # the test appends its listener's port here


def _try(host, port):
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect((host, port))
        return "connected"
    except OSError as exc:
        return type(exc).__name__ + ":" + str(exc.errno)
    finally:
        s.close()


results = {f"127.0.0.1:{p}": _try("127.0.0.1", p) for p in PORTS}
try:
    socket.getaddrinfo("example.com", 443)
    results["dns"] = "resolved"
except OSError as exc:
    results["dns"] = type(exc).__name__
print("PROBE-NET " + json.dumps(results), flush=True)


def workload(x, scale):
    return x * scale

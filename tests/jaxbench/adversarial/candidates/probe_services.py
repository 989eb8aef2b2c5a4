# expect: rejected no_pallas_call
# Probe: tries PostgreSQL, Redis and RabbitMQ on the loopback address.
import socket
import jax.numpy as jnp

res = {}
for port in (5432, 6379, 5672, 8000):
    s = socket.socket()
    s.settimeout(1)
    try:
        s.connect(("127.0.0.1", port))
        res[port] = "CONNECTED"
    except OSError as exc:
        res[port] = type(exc).__name__
    finally:
        s.close()
print("PROBE-SERVICES", res, flush=True)


def workload(x, scale):
    return x

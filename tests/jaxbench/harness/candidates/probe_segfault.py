# expect: runtime_error crash
# Isolation probe: dereferences NULL through ctypes.
import ctypes

ctypes.string_at(0)


def workload(x, scale):
    return x

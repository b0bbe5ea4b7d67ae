"""Keep freed memory in the process instead of handing it back to the kernel after every training step.

glibc serves every allocation above its mmap threshold (at most 32 MiB) with a fresh `mmap` and unmaps it
on `free`. A CPU training step allocates and frees activations of that size many times over (the
spectrogram CNN's 64 × 6,464 cell tokens × 64 wide are 106 MB each), so every step faults all those pages
in again and the kernel zeroes each one: measured on a 2-core virtual machine, about 290,000 page faults a
step and a third of the process's CPU time spent in the kernel (`python -m benchmarks.bench_freed_memory`,
results/freed_memory/). With mmap turned off and no trimming, freed blocks stay on the heap and the next
step reuses them.

jemalloc or tcmalloc loaded with LD_PRELOAD (what `torch.backends.xeon.run_cpu` does) reuse memory the
same way, but they need a library installed and a launcher around the process; glibc's own `mallopt`
needs neither, so it is set here, from inside the process, and only where glibc is the allocator. The
cost: the process keeps its peak heap until it exits, which a training process reaches in its first steps
anyway.
"""

from __future__ import annotations

import ctypes
import sys

M_TRIM_THRESHOLD = -1  # glibc malloc.h
M_MMAP_MAX = -4
NEVER_TRIM = 2**31 - 1  # mallopt takes an int: 2 GiB of free heap top before glibc would trim it


def keep_freed_memory() -> bool:
    """Turn off glibc's mmap for large blocks and its heap trimming in this process (and the loader
    workers it forks later). True when glibc took both settings; False where the C library is not glibc
    (macOS, musl), which is left as it is."""
    if not sys.platform.startswith("linux"):
        return False
    # The process's own symbols, libc's among them: no library search (find_library may run ldconfig).
    libc = ctypes.CDLL(None)
    if not hasattr(libc, "mallopt") or not hasattr(libc, "gnu_get_libc_version"):
        return False  # mallopt with glibc's parameter numbers only
    return bool(libc.mallopt(M_MMAP_MAX, 0)) and bool(libc.mallopt(M_TRIM_THRESHOLD, NEVER_TRIM))

"""``make test``'s steps, each timed: ``python -m booktools steps lint unit ...`` runs ``make <step>`` for each
step in order, stops at the first that fails, and prints the seconds of every step run, with the load average
and the whole, so that CI's log shows where its time goes (CONTRIBUTING.md gives the budget)."""

import os
import subprocess
import time


def run_steps(steps, make="make"):
    """Run ``make <step>`` for each of ``steps``; print the times; return the first non-zero exit status, or 0."""
    times, status = [], 0
    for step in steps:
        load = os.getloadavg()[0]
        start = time.perf_counter()
        print(f"== make {step}", flush=True)
        status = subprocess.run([make, "--no-print-directory", step]).returncode
        times.append((step, time.perf_counter() - start, load, status))
        if status:
            break
    print("== the steps' times (load average at each step's start)", flush=True)
    for step, seconds, load, code in times:
        state = "" if code == 0 else f"  FAILED (exit {code})"
        print(f"   {step:<16} {seconds:7.0f} s  (load {load:.2f}){state}")
    print(f"   {'all':<16} {sum(t[1] for t in times):7.0f} s", flush=True)
    return status

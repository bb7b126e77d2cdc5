#!/usr/bin/env python3
"""Runs the workspace's tests (what `cargo test --workspace --all-features`
runs) with several test binaries at a time.

`cargo test` runs its test binaries one after another, and most of ours spend
their time waiting on Kafka brokers, RabbitMQ or child processes. This script
builds them once (`cargo test --no-run`), then runs every test binary and the
doc tests as jobs, JOBS at a time (default 3), longest first (durations from
.ci/test-durations.tsv, measured by this script; unknown binaries count as
long). Each binary runs as cargo would run it: from its package's directory,
with CARGO_MANIFEST_DIR and CARGO_PKG_NAME set. A job's output is printed
when it fails; every job has a time limit (JOB_TIMEOUT seconds, default 1200).

    python3 .ci/run-tests.py                 # as CI runs it
    JOBS=1 python3 .ci/run-tests.py          # one binary at a time
    python3 .ci/run-tests.py --durations out.tsv   # also write measured durations

Exit status: 0 when every job passed.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CARGO = os.environ.get("CARGO", "cargo")
FEATURES = ["--workspace", "--all-features"]


def build():
    """Builds every test target; returns the jobs (name, argv, cwd, env)."""
    cmd = [CARGO, "test", *FEATURES, "--no-run", "--message-format=json-render-diagnostics"]
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"build failed: {' '.join(cmd)}")
    jobs = []
    for line in proc.stdout.splitlines():
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
            continue
        if not msg.get("profile", {}).get("test"):
            continue
        target = msg["target"]
        manifest = Path(msg["manifest_path"])
        # package_id: "path+file:///dir#name@version", or "path+file:///name#version"
        # when the directory is named after the package.
        url, _, fragment = msg["package_id"].partition("#")
        pkg_name = fragment.split("@")[0] if "@" in fragment else url.rstrip("/").split("/")[-1]
        kind = target["kind"][0]
        name = f"{pkg_name}::{target['name']}" + ("" if kind == "test" else f" ({kind})")
        env = dict(os.environ)
        env["CARGO_MANIFEST_DIR"] = str(manifest.parent)
        env["CARGO_PKG_NAME"] = pkg_name
        jobs.append((name, [msg["executable"]], manifest.parent, env))
    jobs.append(("doc tests", [CARGO, "test", *FEATURES, "--doc"], ROOT, dict(os.environ)))
    return jobs


def known_durations():
    path = ROOT / ".ci" / "test-durations.tsv"
    out = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.startswith("#") or "\t" not in line:
                continue
            secs, name = line.split("\t", 1)
            out[name] = float(secs)
    return out


def main():
    durations_out = None
    if len(sys.argv) == 3 and sys.argv[1] == "--durations":
        durations_out = sys.argv[2]
    elif len(sys.argv) != 1:
        sys.exit(__doc__)
    jobs_n = int(os.environ.get("JOBS", "3"))
    limit = float(os.environ.get("JOB_TIMEOUT", "1200"))
    start = time.monotonic()
    jobs = build()
    built = time.monotonic()
    print(f"== built {len(jobs) - 1} test binaries in {built - start:.0f} s; "
          f"running them {jobs_n} at a time", flush=True)
    known = known_durations()
    jobs.sort(key=lambda j: known.get(j[0], 1e9), reverse=True)

    lock = threading.Lock()
    pending = list(jobs)
    results = []
    logs = Path(tempfile.mkdtemp(prefix="kafka-eos-tests-"))

    def worker():
        while True:
            with lock:
                if not pending:
                    return
                name, argv, cwd, env = pending.pop(0)
            log = logs / (name.replace("::", "-").replace(" ", "_").replace("/", "_") + ".log")
            t0 = time.monotonic()
            with open(log, "w") as out:
                proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out,
                                        stderr=subprocess.STDOUT, start_new_session=True)
                try:
                    code = proc.wait(timeout=limit)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                    code = f"timed out after {limit:.0f} s"
            secs = time.monotonic() - t0
            with lock:
                results.append((name, code, secs, log))
                status = "ok" if code == 0 else f"FAILED ({code})"
                print(f"{secs:7.1f} s  {status:<10} {name}", flush=True)
                if code != 0:
                    print(f"---- output of {name} ----")
                    print(log.read_text(errors="replace")[-60000:])
                    print(f"---- end of {name} ----", flush=True)

    threads = [threading.Thread(target=worker) for _ in range(max(1, jobs_n))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    failed = [r for r in results if r[1] != 0]
    total = time.monotonic() - start
    serial = sum(r[2] for r in results)
    print(f"== {len(results)} jobs, {len(failed)} failed; {total:.0f} s wall "
          f"(build {built - start:.0f} s, tests {total - (built - start):.0f} s; "
          f"{serial:.0f} s if run one at a time)")
    if durations_out:
        with open(durations_out, "w") as f:
            f.write("# seconds\tjob (measured by .ci/run-tests.py)\n")
            for name, _, secs, _ in sorted(results, key=lambda r: -r[2]):
                f.write(f"{secs:.0f}\t{name}\n")
    for name, code, _, _ in failed:
        print(f"FAILED: {name} ({code})")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

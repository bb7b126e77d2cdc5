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

    python3 .ci/run-tests.py                 # the README's test command's tests
    JOBS=1 python3 .ci/run-tests.py          # one binary at a time
    python3 .ci/run-tests.py --durations out.tsv   # also write measured durations

CI adds jobs that share the test step's spare time (the tests spend much of
it waiting on brokers):

    --extra NAME=COMMAND      also run the shell COMMAND (from the workspace
                              root) as job NAME
    --rerun NAME VAR=VALUE    also run test binary NAME again with VAR=VALUE
                              in its environment, as job "NAME (VAR)"

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


def parse_args(argv):
    """(durations file or None, extra jobs [(name, command)], reruns [(name, var, value)])."""
    durations_out, extras, reruns = None, [], []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--durations" and i + 1 < len(argv):
            durations_out = argv[i + 1]
            i += 2
        elif arg == "--extra" and i + 1 < len(argv) and "=" in argv[i + 1]:
            name, _, command = argv[i + 1].partition("=")
            extras.append((name, command))
            i += 2
        elif arg == "--rerun" and i + 2 < len(argv) and "=" in argv[i + 2]:
            var, _, value = argv[i + 2].partition("=")
            reruns.append((argv[i + 1], var, value))
            i += 3
        else:
            sys.exit(__doc__)
    return durations_out, extras, reruns


def main():
    durations_out, extras, reruns = parse_args(sys.argv[1:])
    jobs_n = int(os.environ.get("JOBS", "3"))
    limit = float(os.environ.get("JOB_TIMEOUT", "1200"))
    start = time.monotonic()
    jobs = build()
    built = time.monotonic()
    by_name = {j[0]: j for j in jobs}
    for name, var, value in reruns:
        if name not in by_name:
            sys.exit(f"--rerun {name}: no such test binary")
        _, argv, cwd, env = by_name[name]
        jobs.append((f"{name} ({var})", argv, cwd, {**env, var: value}))
    for name, command in extras:
        jobs.append((name, ["bash", "-c", command], ROOT, dict(os.environ)))
    print(f"== built {len(by_name) - 1} test binaries in {built - start:.0f} s; "
          f"running {len(jobs)} jobs {jobs_n} at a time", flush=True)
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

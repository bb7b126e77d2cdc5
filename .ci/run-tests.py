#!/usr/bin/env python3
"""Runs the workspace's tests (what `cargo test --workspace --all-features`
runs) with several test binaries at a time.

`cargo test` runs its test binaries one after another, and most of ours spend
their time waiting on Kafka brokers, RabbitMQ or child processes. This script
builds them once (`cargo test --no-run`), then runs every test binary and the
doc tests as jobs, JOBS at a time (default 5), longest first (durations from
.ci/test-durations.tsv, measured by this script; unknown binaries count as
long). Each binary runs as cargo would run it: from its package's directory,
with CARGO_MANIFEST_DIR and CARGO_PKG_NAME set; each crate's `integration`
test binary (one module per subject) runs as one job per module (the
modules of SPLIT_BY_VARIANT: one job per Kafka variant), with `--show-output`: a
job's log (in the directory printed at the start) keeps what its passing tests
printed, such as the checkers' seeds. A job's output is printed when it fails;
every job has a time limit (JOB_TIMEOUT seconds, default 1200).

    python3 .ci/run-tests.py                 # the README's test command's tests
    JOBS=1 python3 .ci/run-tests.py          # one binary at a time
    python3 .ci/run-tests.py --durations out.tsv   # also write measured durations

Tests that use the harness's shared clusters (`kafka_testcontainers::shared`:
one single-node Kafka 4.4 with transaction version 2, one with version 1,
one Kafka 3.9) attach to three clusters this script starts with
`kafka-dev --shared` beside the first jobs and stops at the end, instead of
each test binary starting its own: KAFKA_EOS_SHARED_KAFKA is set for every
job (SHARED_KAFKA=0: no shared clusters, each binary starts its own).
Likewise one schema registry (`kafka-dev --shared registry`) for every
job's `SchemaRegistry::shared`, named by KAFKA_EOS_SHARED_REGISTRY.

CI adds jobs that share the test step's spare time (the tests spend much of
it waiting on brokers):

    --extra NAME=COMMAND      also run the shell COMMAND (from the workspace
                              root) as job NAME

Exit status: 0 when every job passed.
"""

import json
import resource
import os
import re
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
    """Builds every test target; returns the jobs (name, argv, cwd, env) and
    the path of the kafka-dev binary."""
    cmd = [CARGO, "test", *FEATURES, "--no-run", "--message-format=json-render-diagnostics"]
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"build failed: {' '.join(cmd)}")
    jobs = []
    kafka_dev = None
    for line in proc.stdout.splitlines():
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
            continue
        if not msg.get("profile", {}).get("test"):
            if msg["target"]["name"] == "kafka-dev":
                kafka_dev = msg["executable"]
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
        if kind == "test" and target["name"] in SPLIT_BY_MODULE:
            for module, tests in tests_by_module(msg["executable"], manifest.parent, env):
                for suffix, group in variant_groups(module, tests):
                    jobs.append((f"{pkg_name}::{module}{suffix}",
                                 [msg["executable"], "--show-output", "--exact", *group],
                                 manifest.parent, env))
        else:
            jobs.append((name, [msg["executable"], "--show-output"], manifest.parent, env))
    jobs.append(("doc tests", [CARGO, "test", *FEATURES, "--doc"], ROOT, dict(os.environ)))
    return jobs, kafka_dev


# Test binaries made of one module per subject (each crate's `integration`):
# each top-level module runs as a job of its own, named `<package>::<module>`.
SPLIT_BY_MODULE = {"integration"}

# Modules whose tests run one Kafka variant after another on clusters of
# their own (three nodes, faults, rolling restarts; one cluster at a time
# through the binary's `ClusterSlot`): one job per variant, named
# `<package>::<module> [<variant>]`, so that the variants run side by side
# instead of making the module the suite's longest job. A variant's tests
# still share their cluster slot, in one process.
SPLIT_BY_VARIANT = {"eos_faults", "transactions_system"}
VARIANT = re.compile(r"::(kafka_4_4_tv[12]|kafka_3_9|tv[12])_")


def variant_groups(module, tests):
    """[(job suffix, tests)]: one group per Kafka variant for the modules
    of SPLIT_BY_VARIANT (tests naming no variant stay together), else the
    module as one group."""
    if module not in SPLIT_BY_VARIANT:
        return [("", tests)]
    groups = {}
    for test in tests:
        m = VARIANT.search(test)
        variant = m.group(1) if m else "other"
        variant = {"tv1": "kafka_4_4_tv1", "tv2": "kafka_4_4_tv2"}.get(variant, variant)
        groups.setdefault(variant, []).append(test)
    return [(f" [{v}]", t) for v, t in sorted(groups.items())]


def tests_by_module(executable, cwd, env):
    """[(module, [full test names])] of a test binary, from `--list`; a test
    outside any module is a module of its own name."""
    out = subprocess.run([executable, "--list", "--format", "terse"], cwd=cwd, env=env,
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    modules = {}
    for line in out.splitlines():
        if not line.endswith(": test"):
            continue
        test = line[: -len(": test")]
        modules.setdefault(test.split("::", 1)[0], []).append(test)
    return sorted(modules.items())


SHARED_VARIANTS = ["4.4-tv2", "4.4-tv1", "3.9"]


def start_shared_clusters(kafka_dev, logs):
    """Starts `kafka-dev --shared` for every variant; returns (directory of
    their descriptions, processes). The tests wait for the descriptions."""
    directory = Path(tempfile.mkdtemp(prefix="kafka-eos-shared-clusters-"))
    procs = []
    for variant in SHARED_VARIANTS:
        log = open(logs / f"shared-kafka-{variant}.log", "w")
        procs.append((variant, log, subprocess.Popen(
            [kafka_dev, "--shared", variant, "--describe", str(directory / f"{variant}.cluster")],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)))
    return directory, procs


def start_shared_registry(kafka_dev, directory, logs):
    """Starts `kafka-dev --shared registry`: the schema registry of every
    job (`SchemaRegistry::shared`; each test binary started its own, about
    10 CPU seconds each). Returns (description path, process)."""
    log = open(logs / "shared-registry.log", "w")
    path = directory / "registry.description"
    proc = subprocess.Popen([kafka_dev, "--shared", "registry", "--describe", str(path)],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    return path, ("registry", log, proc)


def stop_shared_clusters(procs):
    """SIGINT (kafka-dev stops its broker and removes its files), SIGKILL
    after 60 s; returns the variants whose owner had died before."""
    died = [v for v, _, p in procs if p.poll() is not None]
    for _, _, p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
    for _, log, p in procs:
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        log.close()
    return died


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
    """(durations file or None, extra jobs [(name, command)])."""
    durations_out, extras = None, []
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
        else:
            sys.exit(__doc__)
    return durations_out, extras


def main():
    durations_out, extras = parse_args(sys.argv[1:])
    jobs_n = int(os.environ.get("JOBS", "5"))
    limit = float(os.environ.get("JOB_TIMEOUT", "1200"))
    start = time.monotonic()
    jobs, kafka_dev = build()
    built = time.monotonic()
    logs = Path(tempfile.mkdtemp(prefix="kafka-eos-tests-"))
    shared_procs = []
    if os.environ.get("SHARED_KAFKA", "1") != "0" and not os.environ.get("KAFKA_EOS_SHARED_KAFKA"):
        if not kafka_dev:
            sys.exit("no kafka-dev binary among the build's artifacts")
        shared_dir, shared_procs = start_shared_clusters(kafka_dev, logs)
        registry, registry_proc = start_shared_registry(kafka_dev, shared_dir, logs)
        shared_procs.append(registry_proc)
        for _, _, _, env in jobs:
            env["KAFKA_EOS_SHARED_KAFKA"] = str(shared_dir)
            env["KAFKA_EOS_SHARED_REGISTRY"] = str(registry)
        os.environ["KAFKA_EOS_SHARED_KAFKA"] = str(shared_dir)
        os.environ["KAFKA_EOS_SHARED_REGISTRY"] = str(registry)
        print(f"== shared clusters {', '.join(SHARED_VARIANTS)} and a schema registry starting "
              f"(descriptions in {shared_dir})", flush=True)
    for name, command in extras:
        jobs.append((name, ["bash", "-c", command], ROOT, dict(os.environ)))
    print(f"== built the tests in {built - start:.0f} s; "
          f"running {len(jobs)} jobs {jobs_n} at a time; their logs in {logs}", flush=True)
    known = known_durations()
    jobs.sort(key=lambda j: known.get(j[0], 1e9), reverse=True)

    lock = threading.Lock()
    pending = list(jobs)
    results = []

    def next_job():
        """The longest pending job, or None when none is left."""
        with lock:
            return pending.pop(0) if pending else None

    def worker():
        while True:
            job = next_job()
            if job is None:
                return
            name, argv, cwd, env = job
            log = logs / (name.replace("::", "-").replace(" ", "_").replace("/", "_") + ".log")
            t0 = time.monotonic()
            with open(log, "w") as out:
                proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out,
                                        stderr=subprocess.STDOUT, start_new_session=True)
                timed_out = threading.Event()

                def kill():
                    timed_out.set()
                    os.killpg(proc.pid, signal.SIGKILL)

                timer = threading.Timer(limit, kill)
                timer.start()
                # wait4: the job's exit status and its CPU time, with that of
                # the processes it waited for (brokers and child programs).
                _, status, usage = os.wait4(proc.pid, 0)
                timer.cancel()
                proc.returncode = os.waitstatus_to_exitcode(status)
                code = f"timed out after {limit:.0f} s" if timed_out.is_set() else proc.returncode
            secs = time.monotonic() - t0
            cpu = usage.ru_utime + usage.ru_stime
            with lock:
                results.append((name, code, secs, log))
                status = "ok" if code == 0 else f"FAILED ({code})"
                print(f"{secs:7.1f} s  {status:<10} {name}  (cpu {cpu:.0f} s)", flush=True)
                if code != 0:
                    print(f"---- output of {name} ----")
                    print(log.read_text(errors="replace")[-60000:])
                    print(f"---- end of {name} ----", flush=True)

    threads = [threading.Thread(target=worker) for _ in range(max(1, jobs_n))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    died = stop_shared_clusters(shared_procs)
    for variant, log, _ in shared_procs:
        if variant in died:
            name = "shared-registry" if variant == "registry" else f"shared-kafka-{variant}"
            print(f"---- shared {variant} died before the end; its log ----")
            print((logs / f"{name}.log").read_text(errors="replace")[-20000:])
            results.append((f"shared {variant}", "died", 0.0, logs / f"{name}.log"))
    failed = [r for r in results if r[1] != 0]
    total = time.monotonic() - start
    serial = sum(r[2] for r in results)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"== CPU of everything this script ran (build, jobs, shared clusters): "
          f"{children.ru_utime + children.ru_stime:.0f} s")
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

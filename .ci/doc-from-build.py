#!/usr/bin/env python3
"""Runs rustdoc on every library of the workspace against the dependencies
the test build compiled, and prints its diagnostics as `cargo doc
--message-format=json` would (one JSON message per line, then a
`build-finished` message), for .ci/missing-doc-examples.py.

`cargo doc` first type-checks every dependency again in a check pass of its
own (cargo cannot read a dependency's metadata from the libraries a test
build made): about 120 CPU seconds of CI's two cores. rustdoc itself reads
metadata from those libraries as well as from a check's, so this script
takes the invocation cargo would make and points it at them:

1. `cargo test --no-run --message-format=json` (nothing to compile after the
   test build, in the same environment) names the file of every library it
   built, with the package, features and profile it was built with;
2. cargo's unit graph for the same command (`--unit-graph`, read with
   RUSTC_BOOTSTRAP=1: it is unstable) says which of those units each
   workspace library depends on, under which extern name;
3. each workspace library (a documented `lib` target) is documented with
   rustdoc as cargo does it: its edition, features, the workspace's lint
   levels, `--extern` for each dependency, RUSTDOCFLAGS, and the CARGO_PKG_*
   variables; two at a time, each to target/doc (with CARGO_BUILD_TARGET,
   as CI sets it, for that target: its libraries are in the target's own
   folder, the proc macros in the host's).

Any unit that cannot be matched to a built file fails the script (exit 2)
before rustdoc runs: `bash .ci/doc-examples.sh` then falls back to `cargo doc`.

    python3 .ci/doc-from-build.py | python3 .ci/missing-doc-examples.py --library ...
"""

import json
import os
import subprocess
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CARGO = os.environ.get("CARGO", "cargo")
# CI's two test builds: the default targets, and the benches (the only
# targets that use the bench crate's library).
COMMANDS = [["test", "--workspace", "--all-features", "--no-run"],
            ["test", "--workspace", "--all-features", "--benches", "--no-run"]]


def cargo_json(args, env=None):
    out = subprocess.run([CARGO, *args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    if out.returncode != 0:
        give_up(f"`cargo {' '.join(args)}` failed")
    return out.stdout


def give_up(why):
    """Exits with status 2: the caller documents with `cargo doc` instead."""
    print(f"doc-from-build: {why}", file=sys.stderr)
    sys.exit(2)


def profile_key(profile):
    """What tells two builds of one package apart, as both of cargo's
    outputs spell it."""
    return (str(profile.get("opt_level")), str(profile.get("debuginfo") or 0),
            bool(profile.get("debug_assertions")), bool(profile.get("overflow_checks")))


def built_files(command):
    """{(package id, target name, features, profile key): library file}."""
    files = {}
    for line in cargo_json([*command, "--message-format=json"]).splitlines():
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if msg.get("reason") != "compiler-artifact" or msg["profile"].get("test"):
            continue
        kinds = msg["target"]["kind"]
        if not any(k in ("lib", "rlib", "proc-macro") for k in kinds):
            continue
        wanted = (".so",) if "proc-macro" in kinds else (".rlib", ".rmeta")
        library = next((f for f in msg["filenames"] if f.endswith(wanted)), None)
        if library:
            key = (msg["package_id"], msg["target"]["name"], tuple(sorted(msg["features"])),
                   profile_key(msg["profile"]))
            files[key] = library
    return files


def unit_graph(command):
    env = dict(os.environ, RUSTC_BOOTSTRAP="1")
    return json.loads(cargo_json([*command, "--unit-graph", "-Z", "unstable-options"], env))


def lint_flags(manifest, workspace_lints):
    """cargo's lint flags for a package: its own [lints], or the
    workspace's when it says `workspace = true`; priorities first."""
    lints = manifest.get("lints", {})
    if lints.get("workspace"):
        lints = workspace_lints
    flags = []
    for tool, table in lints.items():
        for name, spec in table.items():
            level, priority = (spec, 0) if isinstance(spec, str) else (spec["level"], spec.get("priority", 0))
            lint = name.replace("-", "_") if tool == "rust" else f"{tool}::{name.replace('-', '_')}"
            flags.append((priority, f"--{level}={lint}"))
    return [f for _, f in sorted(flags, key=lambda p: p[0])]


def invocation(unit, kind, units, files, packages, workspace_lints, target_dir):
    """(package id, rustdoc argv, environment) documenting `unit`, a
    workspace library or binary (`kind`), as cargo would."""

    def library_of(dep_unit):
        key = (dep_unit["pkg_id"], dep_unit["target"]["name"], tuple(sorted(dep_unit["features"])),
               profile_key(dep_unit["profile"]))
        if key not in files:
            give_up(f"no built library for {key}")
        return files[key]

    target = unit["target"]
    package = packages[unit["pkg_id"]]
    manifest = tomllib.loads(Path(package["manifest_path"]).read_text())
    args = [os.environ.get("RUSTDOC", "rustdoc"), f"--edition={target['edition']}",
            "--crate-type", kind, "--crate-name", target["name"].replace("-", "_"),
            target["src_path"], "-o", str(target_dir / "doc"), "--error-format=json"]
    for feature in unit["features"]:
        args += ["--cfg", f'feature="{feature}"']
    args += lint_flags(manifest, workspace_lints)
    build_target = os.environ.get("CARGO_BUILD_TARGET")
    if build_target:
        args += ["--target", build_target,
                 "-L", f"dependency={target_dir / build_target / 'debug' / 'deps'}"]
    args += ["-L", f"dependency={target_dir / 'debug' / 'deps'}"]
    for dep in unit["dependencies"]:
        dep_unit = units[dep["index"]]
        if dep_unit["mode"] != "build":
            continue  # the package's build script: run before, nothing to link
        args += ["--extern", f"{dep['extern_crate_name']}={library_of(dep_unit)}"]
    args += ["--crate-version", package["version"]]
    args += os.environ.get("RUSTDOCFLAGS", "").split()
    version = package["version"].split("-")[0].split(".")
    env = dict(os.environ, CARGO_PKG_NAME=package["name"], CARGO_PKG_VERSION=package["version"],
               CARGO_PKG_VERSION_MAJOR=version[0], CARGO_PKG_VERSION_MINOR=version[1],
               CARGO_PKG_VERSION_PATCH=version[2], CARGO_PKG_VERSION_PRE="",
               CARGO_PKG_DESCRIPTION=package.get("description") or "",
               CARGO_PKG_AUTHORS=":".join(package.get("authors", [])),
               CARGO_PKG_REPOSITORY=package.get("repository") or "",
               CARGO_PKG_HOMEPAGE=package.get("homepage") or "",
               CARGO_PKG_LICENSE=package.get("license") or "",
               CARGO_MANIFEST_DIR=str(Path(package["manifest_path"]).parent),
               CARGO_MANIFEST_PATH=package["manifest_path"],
               CARGO_CRATE_NAME=target["name"].replace("-", "_"))
    return unit["pkg_id"], args, env


def main():
    metadata = json.loads(cargo_json(["metadata", "--format-version", "1", "--no-deps"]))
    packages = {p["id"]: p for p in metadata["packages"]}
    workspace = set(metadata["workspace_members"])
    workspace_lints = tomllib.loads((ROOT / "Cargo.toml").read_text()).get("workspace", {}).get("lints", {})
    target_dir = Path(metadata["target_directory"])
    jobs = []
    for command in COMMANDS:
        files = built_files(command)
        units = unit_graph(command)["units"]
        # Each documented library and binary of the workspace as the build
        # uses it ("build"), else as its unit tests are built ("test": the
        # same dependencies and the dev-dependencies). As with cargo doc, a
        # binary named like a library is left out (their pages would collide).
        library_names = {u["target"]["name"].replace("-", "_") for u in units
                         if u["pkg_id"] in workspace and "lib" in u["target"]["kind"]}
        chosen = {}
        for unit in units:
            target = unit["target"]
            kind = "lib" if "lib" in target["kind"] else "bin" if "bin" in target["kind"] else None
            if (unit["pkg_id"] not in workspace or kind is None or not target.get("doc", True)
                    or unit["mode"] not in ("build", "test")
                    or (kind == "bin" and target["name"].replace("-", "_") in library_names)):
                continue
            key = (unit["pkg_id"], kind, target["name"])
            if unit["mode"] == "build" or key not in chosen:
                chosen[key] = unit
        for key, unit in chosen.items():
            if key not in (job[0] for job in jobs):
                jobs.append((key, *invocation(unit, key[1], units, files, packages,
                                              workspace_lints, target_dir)))

    def document(job):
        _, package_id, args, env = job
        proc = subprocess.run(args, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        return package_id, proc.returncode, proc.stderr

    success = True
    with ThreadPoolExecutor(max_workers=2) as pool:
        for package_id, code, stderr in pool.map(document, jobs):
            for line in stderr.splitlines():
                try:
                    message = json.loads(line)
                except json.JSONDecodeError:
                    # Not a diagnostic (rustdoc prints little else): shown as a warning.
                    message = {"level": "warning", "message": line, "rendered": line, "spans": []}
                if "$message_type" in message and message["$message_type"] != "diagnostic":
                    continue
                print(json.dumps({"reason": "compiler-message", "package_id": package_id,
                                  "message": message}))
            success &= code == 0
    print(json.dumps({"reason": "build-finished", "success": success}))


if __name__ == "__main__":
    main()

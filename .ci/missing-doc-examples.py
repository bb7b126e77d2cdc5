#!/usr/bin/env python3
"""Reads `cargo doc --message-format=json` (run with rustdoc's
missing_doc_code_examples lint as a warning) on standard input; prints each
public item of a library crate (`--library NAME`, once per crate) that the
lint reports as lacking a doc example and that is a place where an example
teaches, and every other warning or error of any crate, and exits 1 if there
is one (or if the build failed).

Where an example teaches (rustls keeps `missing_docs` on every item and puts
examples on its entry points; this is the same rule, checked):
1. crate roots and modules;
2. traits (users implement them, or call through them);
3. constructors and entry points: associated functions named `new`,
   `new_*`, `connect`, `connect_*`, `builder`, `from_properties`, `start`,
   `start_*` or `open`.
Getters, setters, enum variants, fields and the rest need a doc comment
(`missing_docs`), not an example.

The lint of this toolchain's rustdoc also reports every `impl` block; an
`impl` block is not an item a reader looks up (its methods are, and they are
reported on their own), and later rustdoc releases no longer report it: those
reports are left out — a report on a line that begins with `impl`, and one on
a macro invocation (`message! {`) whose own doc comment holds an example:
the invocation's item has its example, so what is reported there is an
`impl` block the macro generates (an invocation whose doc has no example is
reported as usual).
"""

import argparse
import json
import re
import sys

LINT = "rustdoc::missing_doc_code_examples"


MACRO_CALL = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*!\s*[{(\[]")
# rustc's closing summaries ("3 warnings emitted", "aborting due to ..."):
# they repeat what was reported.
SUMMARY = re.compile(r"^(\d+ warnings? emitted|aborting due to|warning: .* generated \d+ warnings?)")


def primary_lines(message):
    for span in message.get("spans", []):
        if span.get("is_primary") and span.get("text"):
            return [t["text"].strip() for t in span["text"]]
    return []


def is_impl_report(lines):
    if not lines:
        return False
    if lines[0].startswith(("impl ", "impl<", "unsafe impl")):
        return True
    return bool(MACRO_CALL.match(lines[0])) and any(l.startswith("/// ```") for l in lines)


ENTRY_FN = re.compile(
    r"^(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+"
    r"(new|new_\w+|connect|connect_\w+|builder|from_properties|start|start_\w+|open)\b"
)
ITEM_MOD = re.compile(r"^(?:pub(?:\([^)]*\))?\s+)?mod\s+")
ITEM_TRAIT = re.compile(r"^(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+)?trait\s+")


def item_line(lines, following=()):
    """The first line of the reported span that is not an attribute, a
    comment or blank; when the span holds only the item's doc comment (as
    this toolchain's rustdoc reports it), the first such line of the source
    after the span (`following`)."""
    for line in list(lines) + [l.strip() for l in following]:
        if line.startswith(("#[", "///", "//")) or not line:
            continue
        return line
    return None


def following_lines(message, limit=40):
    """Up to `limit` source lines after the primary span (read from the
    workspace, where cargo reports the file relative to)."""
    for span in message.get("spans", []):
        if span.get("is_primary"):
            try:
                with open(span["file_name"], encoding="utf-8") as f:
                    source = f.read().split("\n")
            except (OSError, KeyError):
                return []
            end = span.get("line_end", 0)
            return source[end : end + limit]
    return []


def wants_example(lines, following=()):
    """True when the reported item is one of the places listed in this
    script's doc: a crate root or module, a trait, a constructor or entry
    point. Attribute and doc-comment lines before the item are skipped."""
    if not lines:
        return True
    if lines[0].startswith(("//!", "#!")):
        return True  # a crate root (or a module file) reported from its inner docs
    line = item_line(lines, following)
    if line is None:
        return True
    return bool(ITEM_MOD.match(line) or ITEM_TRAIT.match(line) or ENTRY_FN.match(line))


def package_name(msg):
    """The package name of a cargo message's `package_id`, in either of
    cargo's spellings ("name 0.1.0 (path+file://...)" and
    "path+file:///.../dir#name@0.1.0", or "path+file:///.../name#0.1.0" when
    the folder has the package's name)."""
    pid = msg.get("package_id", "")
    if "#" in pid:
        url, tail = pid.rsplit("#", 1)
        return tail.split("@", 1)[0] if "@" in tail else url.rstrip("/").rsplit("/", 1)[-1]
    return pid.split(" ", 1)[0]


def main():
    args = argparse.ArgumentParser()
    args.add_argument("--library", action="append", default=[])
    libraries = set(args.parse_args().library)
    missing = []
    failed_build = False
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if msg.get("reason") == "build-finished" and not msg.get("success", True):
            failed_build = True
        if msg.get("reason") != "compiler-message":
            continue
        message = msg["message"]
        code = (message.get("code") or {}).get("code")
        if code == LINT:
            lines = primary_lines(message)
            if package_name(msg) not in libraries or is_impl_report(lines):
                continue
            if not wants_example(lines, following_lines(message)):
                continue
            missing.append(message.get("rendered") or (lines[0] if lines else LINT))
        elif message.get("level") in ("error", "warning"):
            if SUMMARY.match(message.get("message", "")):
                continue
            missing.append(message.get("rendered") or message.get("message", ""))
    for m in missing:
        print(m)
    if failed_build:
        print("rustdoc failed", file=sys.stderr)
    sys.exit(1 if missing or failed_build else 0)


if __name__ == "__main__":
    main()

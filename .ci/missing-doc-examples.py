#!/usr/bin/env python3
"""Reads `cargo rustdoc --message-format=json` (run with rustdoc's
missing_doc_code_examples lint as a warning) on standard input; prints each
public item the lint reports as lacking a doc example and exits 1 if there is
one.

The lint of this toolchain's rustdoc also reports every `impl` block; an
`impl` block is not an item a reader looks up (its methods are, and they are
reported on their own), and later rustdoc releases no longer report it: those
reports are left out — a report on a line that begins with `impl`, and one on
a macro invocation (`message! {`) whose own doc comment holds an example:
the invocation's item has its example, so what is reported there is an
`impl` block the macro generates (an invocation whose doc has no example is
reported as usual).
"""

import re

import json
import sys

LINT = "rustdoc::missing_doc_code_examples"


MACRO_CALL = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*!\s*[{(\[]")


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


def main():
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
            if is_impl_report(lines):
                continue
            missing.append(message.get("rendered") or (lines[0] if lines else LINT))
        elif message.get("level") == "error":
            missing.append(message.get("rendered") or message.get("message", ""))
    for m in missing:
        print(m)
    if failed_build:
        print("rustdoc failed", file=sys.stderr)
    sys.exit(1 if missing or failed_build else 0)


if __name__ == "__main__":
    main()

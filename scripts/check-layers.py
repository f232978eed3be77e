#!/usr/bin/env python3
"""The layers of the tree, and which may include which (CONTRIBUTING.md's
code map). Every #include "dir/file.h" of a source under a layer must name
the layer itself or one it may use; anything else is an arrow running the
wrong way, and this check fails naming the file, the line and what would
be right. tests/, bench/ and fuzz/ may include any layer.

  scripts/check-layers.py [ROOT]      (default: the tree this script is in)

./test.sh runs it before building; tests/packaging/layers_test.sh plants a
wrong include in a scratch tree and sees it refused.
"""
import os
import re
import sys

# Ground floor first. A layer may include those listed, and itself.
LAYERS = {
    "common/core": [],
    "common/host": ["common/core"],
    "common/wire": ["common/core"],
    "common/tls": ["common/core"],
    "workloads": ["common/core", "common/host"],
    "reports": ["common/core"],
    "fabric": ["common/core", "common/host", "common/tls"],
    "injectors": ["common/core", "common/host", "workloads"],
    "agents": ["common/core", "common/host", "common/wire", "common/tls", "injectors"],
    "harness/scenario": ["common/core", "common/wire", "injectors", "workloads", "fabric"],
    "harness/controller": ["common/core", "common/host", "common/wire", "common/tls",
                           "harness/scenario", "fabric", "reports", "injectors", "workloads"],
    "harness/cli": ["common/core", "common/host", "common/wire", "common/tls",
                    "harness/scenario", "harness/controller", "fabric", "reports", "injectors",
                    "workloads"],
}
ANYTHING = ("tests/", "bench/", "fuzz/")
SOURCE = (".cc", ".h", ".c", ".cpp")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_of(path):
    """The layer a repository path belongs to, or None (not a layer)."""
    for name in sorted(LAYERS, key=len, reverse=True):
        if path == name or path.startswith(name + "/"):
            return name
    return None


def check(root):
    problems = []
    for name in LAYERS:
        for dirpath, _, files in os.walk(os.path.join(root, name)):
            for f in sorted(files):
                if not f.endswith(SOURCE):
                    continue
                full = os.path.join(dirpath, f)
                rel = os.path.relpath(full, root)
                own = layer_of(rel)
                with open(full, errors="replace") as text:
                    for number, line in enumerate(text, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = layer_of(m.group(1))
                        if target is None or target == own or target in LAYERS[own]:
                            continue
                        allowed = ", ".join(LAYERS[own]) or "nothing but itself"
                        problems.append(
                            f"{rel}:{number}: includes \"{m.group(1)}\" ({target}), but {own} may "
                            f"use only {allowed} (scripts/check-layers.py; CONTRIBUTING.md's code "
                            f"map says why)")
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))
    problems = check(root)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"check-layers: {len(problems)} include(s) across layers the wrong way",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""check_includes: fails on a project header a C file includes but takes no
name from (`make check-format`). A header's names are what it declares:
macros, functions, types, structs, enums and their constants, and extern
variables, with those of the project headers it includes in turn. A .c
file's own header (x.c including x.h) always counts as used, as does a
header the file includes for a macro it tests with #if(n)def.

usage: check_includes.py SRC_DIR FILE.c...
Exit status: 0 clean, 1 an unused include (each named), 2 bad usage."""

import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')
WORD = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")

DECLS = [
    re.compile(r"^\s*#\s*define\s+([A-Za-z_]\w*)", re.M),
    re.compile(r"\b(?:struct|enum|union)\s+([A-Za-z_]\w*)"),
    re.compile(r"\btypedef\b[^;]*?\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?\s*;", re.S),
    re.compile(r"\btypedef\b[^;]*?\(\s*\*?\s*([A-Za-z_]\w*)\s*\)\s*\(", re.S),
    re.compile(r"\b([A-Za-z_]\w*)\s*\(", re.M),
    re.compile(r"\bextern\b[^;(]*?\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?\s*;", re.S),
]
ENUM_BODY = re.compile(r"\benum\b[^{;]*\{([^}]*)\}", re.S)


def strip(text):
    return STRING.sub('""', COMMENT.sub(" ", text))


def find_header(name, near, src):
    for d in (near, os.path.join(src, "lib"), os.path.join(src, "daemon"),
              os.path.join(src, "cli"), os.path.join(src, "probes", "lib"), src):
        p = os.path.join(d, name)
        if os.path.isfile(p):
            return os.path.normpath(p)
    return None


_names = {}


def header_names(path, src, seen=None):
    """The names a project header declares, with those of its own project
    includes."""
    if path in _names:
        return _names[path]
    seen = seen or set()
    if path in seen:
        return set()
    seen.add(path)
    raw = open(path, encoding="utf-8", errors="replace").read()
    text = strip(raw)
    names = set()
    for rx in DECLS:
        names.update(rx.findall(text))
    for body in ENUM_BODY.findall(text):
        names.update(re.findall(r"\b([A-Za-z_]\w*)\s*(?:=|,|$)", body, re.M))
    # a guard is no name a file takes
    names = {n for n in names if not re.fullmatch(r"TW_\w+_H", n)}
    for inc in INCLUDE.findall(raw):
        h = find_header(inc, os.path.dirname(path), src)
        if h:
            names |= header_names(h, src, seen)
    _names[path] = names
    return names


def check(path, src):
    raw = open(path, encoding="utf-8", errors="replace").read()
    body = strip(INCLUDE.sub("", raw))
    used = set(WORD.findall(body))
    own = os.path.splitext(os.path.basename(path))[0] + ".h"
    bad = []
    for inc in INCLUDE.findall(raw):
        if os.path.basename(inc) == own:
            continue
        h = find_header(inc, os.path.dirname(path), src)
        if not h:
            continue  # generated or not the project's
        if not (header_names(h, src) & used):
            bad.append(inc)
    return bad


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    src, files = argv[1], argv[2:]
    failed = 0
    for f in files:
        for inc in check(f, src):
            print(f'{f}: includes "{inc}" but takes no name from it')
            failed = 1
    if not failed:
        print(f"check_includes: {len(files)} files, every project include used")
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv))

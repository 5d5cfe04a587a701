#!/usr/bin/env python3
"""check_packages: proves the Makefile's package lists, on a machine that
may have far more installed than a fresh one.

A fresh clone on a used machine builds and tests with whatever was ever
installed there by hand, so a missing install step hides until a new
machine meets it. This check resolves what the build and the tests really
use to the Debian package that ships it (dpkg -S) and fails when no list
of the Makefile's brings that package to a fresh machine:

  - every pkg-config module the programs link (LIBS_ALL) must be named in
    PKGS_BUILD, and as PACKAGE:ARCH in the cross build's PKGS_DEB_CROSS;
    cmocka in PKGS_TEST and PKGS_CROSS_TEST;
  - every system header the sources include (cc -M) and every command the
    test scripts run must come from a package that a list names, that one
    of those depends on (apt installs Depends), or that every Debian
    machine has (Priority required or important);
  - every command a script tests for with `command -v` must be here at
    all, or the script would skip on a fresh machine without saying why.

Input: a file of NAME=VALUE lines (make print-packages). Prints what it
checked and every failure; exits 0 when all resolve, 1 otherwise.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

# Words at a command's position that are shell syntax, not programs.
SHELL_WORDS = {
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done",
    "case", "esac", "in", "function", "local", "export", "declare", "readonly",
    "return", "exit", "set", "unset", "shift", "trap", "eval", "source", ".",
    "break", "continue", "wait", "read", "cd", "echo", "printf", "true", "false",
    "test", "[", "[[", "kill", "command", "type", "hash", "ulimit", "umask",
    "let", "shopt", "builtin", "jobs", "disown", "mapfile", "exec", "time",
}
# Prefix commands whose next word is the real command (their options and
# NAME=VALUE words are skipped).
PREFIXES = {"env", "exec", "timeout", "nice", "nohup", "setsid", "taskset",
            "unshare", "sudo", "xargs", "chrt", "ionice", "stdbuf", "command"}


def read_lists(path):
    lists = {}
    with open(path) as f:
        for line in f:
            name, _, value = line.rstrip("\n").partition("=")
            if name:
                lists[name] = value.split()
    return lists


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def owners(paths):
    """{path: package} for those of paths that a package ships (arch
    qualifiers dropped), in one dpkg -S call; usrmerge means dpkg may
    know /bin/x as /usr/bin/x or the other way round."""
    alias = {}
    for p in paths:
        for q in {p, os.path.realpath(p)}:
            alias.setdefault(q, p)
            alias.setdefault(q[4:] if q.startswith("/usr/") else "/usr" + q, p)
    r = run(["dpkg", "-S"] + sorted(alias))
    got = {}
    for line in r.stdout.splitlines():
        if line.startswith("diversion by"):
            continue
        pkgs, _, path = line.partition(": ")
        if path in alias:
            got.setdefault(alias[path], pkgs.split(",")[0].split(":")[0].strip())
    return got


def owner(path):
    return owners([path]).get(path)


def closure(pkgs):
    """The named packages and all that they depend on, recursively (Depends
    and Pre-Depends, every alternative, virtual names through Provides),
    read from dpkg's own records of the installed packages: no apt lists
    needed."""
    r = run(["dpkg-query", "-W", "-f=${Package}\t${Depends}, ${Pre-Depends}\t${Provides}\n"])
    deps, provides = {}, {}
    name = re.compile(r"^\s*([a-z0-9][a-z0-9+.-]*)")
    for line in r.stdout.splitlines():
        pkg, dep, prov = (line.split("\t") + ["", ""])[:3]
        deps[pkg] = [m.group(1) for d in re.split(r"[,|]", dep) if (m := name.match(d))]
        for v in prov.split(","):
            if (m := name.match(v)):
                provides.setdefault(m.group(1), []).append(pkg)
    todo = [p.split(":")[0].split("=")[0] for p in pkgs]
    seen = set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        todo += deps.get(p, []) + provides.get(p, [])
    return seen


def priority(pkg):
    r = run(["dpkg-query", "-W", "-f=${Priority}", pkg])
    return r.stdout.strip() if r.returncode == 0 else ""


def script_commands(paths):
    """Words at a command position in shell scripts, and `command -v` names."""
    cmds, probed = {}, set()
    split = re.compile(r"\|\||&&|[|;(`{]|\$\(|\bthen\b|\bdo\b|\belse\b|!")
    for path in paths:
        with open(path, errors="replace") as f:
            text = f.read()
        text = re.sub(r"(?m)^\s*#.*$", "", text)
        # Single-quoted text (jq and awk programs, messages) runs nothing;
        # keep its newlines so that line numbers stay right.
        text = re.sub(r"'[^']*'", lambda m: "''" + "\n" * m.group(0).count("\n"), text)
        for n, line in enumerate(text.splitlines(), 1):
            code = re.sub(r"(^|\s)#.*", "", line)
            # A script that skips without a command would skip on a
            # fresh machine: that command must be here.
            if "exit 77" in code:
                probed.update(re.findall(r"command -v ([A-Za-z0-9_.+-]+)", code))
            for seg in split.split(code):
                words = seg.split()
                while words and (words[0] in PREFIXES or "=" in words[0]
                                 or words[0].startswith("-") or words[0].isdigit()):
                    words.pop(0)
                if not words:
                    continue
                w = words[0]
                if re.fullmatch(r"[a-z][a-z0-9_.+-]*", w) and w not in SHELL_WORDS:
                    cmds.setdefault(w, f"{os.path.relpath(path)}:{n}")
    return cmds, probed


def system_headers(src, cflags):
    """Headers under /usr that the C sources include, from cc -M."""
    heads = set()
    files = []
    for d in ("lib", "daemon", "cli", "probes", "probes/lib", "tests/unit", "tests/tools",
              "tests/shim", "tests/fuzz"):
        files += glob.glob(os.path.join(src, d, "*.c"))
    inc = ["-D_GNU_SOURCE", "-I" + os.path.join(src, "lib"), "-I" + os.path.join(src, "daemon"),
           "-I" + os.path.join(src, "cli"), "-I" + os.path.join(src, "probes/lib"),
           "-I" + os.path.join(src, "build")]
    for f in files:
        r = run(["cc", "-M", "-MG"] + inc + cflags + [f])
        for tok in r.stdout.replace("\\\n", " ").split():
            if tok.startswith("/usr/") and tok.endswith(".h"):
                heads.add(os.path.normpath(tok))
    return heads


def main():
    if len(sys.argv) != 3:
        print("usage: check_packages.py LISTS SRC", file=sys.stderr)
        return 2
    lists, src = read_lists(sys.argv[1]), sys.argv[2]
    arch = lists.get("CROSS_ARCH", ["arm64"])[0]
    build, test = set(lists["PKGS_BUILD"]), set(lists["PKGS_TEST"])
    cross, cross_test = set(lists["PKGS_DEB_CROSS"]), set(lists["PKGS_CROSS_TEST"])
    cmd_pkgs = {c.split("=", 1)[1] for c in lists.get("CMDS_TEST", [])}
    cmd_names = {c.split("=", 1)[0] for c in lists.get("CMDS_TEST", [])}
    named = test | cmd_pkgs | set(lists.get("PKGS_DEB", [])) | cross | cross_test
    have = closure(named)
    bad = []

    # pkg-config modules: named directly, natively and for the cross build.
    for mod, need, need_cross in [(m, build, cross) for m in lists["LIBS_ALL"]] + [
            ("cmocka", test, cross_test)]:
        r = run(["pkg-config", "--path", mod])
        pc = r.stdout.strip()
        pkg = owner(pc) if r.returncode == 0 and pc else None
        if not pkg:
            bad.append(f"pkg-config module {mod}: no .pc file here, or no package ships it")
            continue
        if pkg not in need:
            bad.append(f"pkg-config module {mod}: {pkg} is not in the build or test list")
        if f"{pkg}:{arch}" not in need_cross:
            bad.append(f"pkg-config module {mod}: {pkg}:{arch} is not in the cross list")
        print(f"module {mod}: {pkg} (and {pkg}:{arch})")

    # Headers and commands: named, depended on, or on every machine.
    def accepted(pkg):
        return pkg in have or priority(pkg) in ("required", "important")

    cflags = []
    for mod in lists["LIBS_ALL"] + ["cmocka"]:
        cflags += run(["pkg-config", "--cflags", mod]).stdout.split()
    heads = owners(sorted(system_headers(src, cflags)))
    for h, pkg in sorted(heads.items()):
        if not accepted(pkg):
            bad.append(f"header {h}: from {pkg}, which no list brings")
    print(f"headers: {len(heads)} resolved to {len(set(heads.values()))} packages")

    scripts = sorted(glob.glob(os.path.join(src, "tests/regress/*.sh")) +
                     glob.glob(os.path.join(src, "tests/fuzz/*.sh")) +
                     [os.path.join(src, ".ci/run")])
    cmds, probed = script_commands(scripts)
    for name in sorted(probed):
        if not shutil.which(name) and name not in cmd_names:
            bad.append(f"command {name}: tested for with command -v, but not on this machine")
    paths = {}
    for name in cmds:
        path = shutil.which(name)
        # Not a function, a variable or the project's own; CMDS_TEST
        # installs its commands when they are missing.
        if path and path.startswith(("/usr/", "/bin/", "/sbin/")) and name not in cmd_names:
            paths[name] = path
    found = owners(sorted(set(paths.values())))
    for name, path in sorted(paths.items()):
        where, pkg = cmds[name], found.get(path)
        if not pkg:
            bad.append(f"command {name} ({where}): {path} belongs to no package")
        elif not accepted(pkg):
            bad.append(f"command {name} ({where}): from {pkg}, which no list brings")
    print(f"commands: {len(paths)} resolved to {len(set(found.values()))} packages")
    for b in bad:
        print("MISSING: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

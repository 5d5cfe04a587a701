#!/usr/bin/env python3
"""gen-config-docs: rewrites the two documents that follow threadwatchd's
table of configuration keys (daemon/config.c), from the daemon itself:

- etc/threadwatchd.conf: `threadwatchd --dump-config-file`;
- doc/man/threadwatchd.conf.5, the KEYS section: one .TP entry per row of
  the Markdown table.

Usage: gen-config-docs.py THREADWATCHD SRCDIR   (make docs runs it).
tests/regress/50-daemon-config.sh and 77-man.sh fail when a document is
stale.
"""
import re
import subprocess
import sys


def run(daemon, flag):
    return subprocess.run([daemon, flag], check=True, capture_output=True, text=True).stdout


def roff(text):
    """Markdown-table prose to roff: option dashes escaped, $VARIABLES bold."""
    text = text.replace("\\", "\\e")
    text = re.sub(r"(?<![\w-])--([a-z])", r"\\-\\-\1", text)
    text = re.sub(r"(\\-\\-[a-z]+)-([a-z])", r"\1\\-\2", text)
    text = re.sub(r"(\\-\\-[a-z]+\\-[a-z]+)-([a-z])", r"\1\\-\2", text)
    text = re.sub(r"(?<![\\])-(?=\d)", r"\\-", text)  # minus signs and exponents
    text = re.sub(r"([A-Z][a-z]+)-([A-Z])", r"\1\\-\2", text)  # names such as Mann-Whitney
    return re.sub(r"(\$[A-Z_]+)", r"\\fB\1\\fR", text)


def default_text(default):
    """The default as the page gives it; install paths differ per prefix."""
    m = re.match(r"/usr/(?:local/)?lib/threadwatch/(.*)", default)
    if m:
        return ("\\fB/usr/lib/threadwatch/%s\\fR in the Debian package "
                "(\\fIPREFIX\\fB/lib/threadwatch/%s\\fR from a source install)" % (m[1], m[1]))
    # A long value without spaces (a priority string) may break after each
    # ':' (\: is roff's zero-width break point), so troff can fill the line.
    text = roff(default)
    if len(default) > 40 and " " not in default:
        text = text.replace(":", ":\\:")
    return "\\fB%s\\fR" % text


def man_keys(table):
    out = []
    for line in table.splitlines():
        if not line.startswith("| `"):
            continue
        key, typ, default, rng, desc = [c.strip() for c in line.strip().strip("|").split("|")]
        key, default = key.strip("`"), default.strip("`")
        restart = desc.endswith(" Takes effect on restart.")
        if restart:
            desc = desc[: -len(" Takes effect on restart.")]
        tail = "Default: %s." % default_text(default)
        if rng:
            tail += " Range: %s." % roff(rng)
        if restart:
            tail += " A reload does not change it; it takes effect on restart."
        if len(default) > 40 and " " not in default:
            # nothing to stretch on that line: left-aligned, not justified
            tail = ".ad l\n%s\n.ad b" % tail
        out += [".TP", '.BI "%s = " "%s"' % (key, typ), roff(desc), tail]
    return "\n".join(out) + "\n"


def main():
    daemon, src = sys.argv[1], sys.argv[2]
    table = run(daemon, "--dump-config-doc")

    open(src + "/etc/threadwatchd.conf", "w").write(run(daemon, "--dump-config-file"))

    path = src + "/doc/man/threadwatchd.conf.5"
    text = open(path).read()
    text = re.sub(r"(^\.SH KEYS\n).*?(?=^\.SH )", lambda m: m.group(1) + man_keys(table), text,
                  flags=re.S | re.M)
    open(path, "w").write(text)


if __name__ == "__main__":
    main()

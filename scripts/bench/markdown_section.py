"""One named section of a Markdown file, between marker lines, rewritten on its own: the
benchmark scripts (run.py, real.py) each own a section of docs/BENCHMARKS.md and leave the others
as they are."""

import os


def markers(name):
    return "<!-- bench:%s:begin -->" % name, "<!-- bench:%s:end -->" % name


def replace(path, name, lines):
    """Writes `lines` as section `name` of `path`: in place of the old one, or at the end."""
    begin, end = markers(name)
    old = open(path).read().splitlines() if os.path.exists(path) else []
    section = [begin] + list(lines) + [end]
    if begin in old and end in old:
        new = old[:old.index(begin)] + section + old[old.index(end) + 1:]
    else:
        new = old + ([""] if old else []) + section
    temporary = path + ".tmp"
    with open(temporary, "w") as f:
        f.write("\n".join(new) + "\n")
    os.replace(temporary, path)

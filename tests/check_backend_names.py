#!/usr/bin/env python3
"""The backends stay in their folder (issue 44): no string literal outside backends/ and tests/
names a backend, and no shared template keeps a line for one backend (a `#[flag]` / `//[flag]`
tag named after one). A backend's name, its options, its sections, its place in the sweep's
defaults and the Python shim's run are all in backends/<id>/ and backends/backends.def, reached
through the registry; this test fails when a file elsewhere spells one out.

The writers (repro/, issue 53) go further: no file there names the inject test backend at all,
in code, templates or comments; what inject adds to a reproducer is its section's, reached
through ReproBackend like any backend's (an edited graph, its head, its flags).

usage: check_backend_names.py SOURCE_ROOT   (ctest: backends.names_stay_inside, label unit)

It first checks itself on a made-up file (a literal, a comment, a docstring and a template tag),
so that a lexer that found nothing cannot pass for a clean tree."""

import os
import re
import sys

# Where tsrepro's own code lives. Not scanned: backends/ (the backends themselves), tests/ and
# fuzz/ (they exercise the backends by name), examples/, scripts/ and docs/ (they are callers:
# command lines a user types name a backend as a user would).
SCANNED_ROOTS = ("include", "runner", "process", "minifier", "repro", "sweep", "cli", "capture", "python", "cmake")
SCANNED_FILES = ("CMakeLists.txt",)
C_LIKE = (".h", ".cpp", ".cpp.in", ".c")
PYTHON = (".py", ".py.in")
CMAKE = (".cmake", "CMakeLists.txt")


def backend_ids(root):
    with open(os.path.join(root, "backends", "backends.def")) as f:
        return re.findall(r"^TSREPRO_BACKEND\(\s*(\w+)\s*,", f.read(), re.M)


# Every file under repro/ that source_files leaves out (templates of other kinds: .txt.in, .html).
def writer_templates(root):
    found = []
    for folder, _, files in os.walk(os.path.join(root, WRITERS_ROOT)):
        found += [os.path.relpath(os.path.join(folder, f), root) for f in files]
    return sorted(p for p in found if not p.endswith(C_LIKE + PYTHON + CMAKE))


def source_files(root):
    found = [f for f in SCANNED_FILES if os.path.exists(os.path.join(root, f))]
    for top in SCANNED_ROOTS:
        for folder, _, files in os.walk(os.path.join(root, top)):
            found += [os.path.relpath(os.path.join(folder, f), root) for f in files]
    return sorted(p for p in found if p.endswith(C_LIKE + PYTHON + CMAKE))


# One pass over the text: comments dropped, literals kept with the line they start on. Template
# tags live in comments, so they are collected on the way.
def literals_and_tags(text, python):
    literals, tags = [], []
    i, line, n = 0, 1, len(text)
    comment = "#" if python else "//"
    while i < n:
        c = text[i]
        if text.startswith(comment, i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            tags += [(line, t) for t in re.findall(r"\[!?(\w+)\]\s*$", text[i:end])]
            i = end
        elif not python and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += text.count("\n", i, end)
            i = end
        elif not python and text.startswith('R"', i):
            delim_end = text.find("(", i)
            closing = ")" + text[i + 2:delim_end] + '"'
            end = text.find(closing, delim_end)
            literals.append((line, text[delim_end + 1:end]))
            line += text.count("\n", i, end)
            i = end + len(closing)
        elif c in "\"'" and (python or c == '"' or not text[i - 1:i].isalnum()):
            quote = c * 3 if python and text.startswith(c * 3, i) else c
            j = i + len(quote)
            while j < n and not text.startswith(quote, j):
                j += 2 if text[j] == "\\" else 1
            if c == '"' and len(quote) == 1 or python and len(quote) == 1:  # a docstring is prose
                literals.append((line, text[i + len(quote):j]))
            line += text.count("\n", i, j)
            i = j + len(quote)
        else:
            line += c == "\n"
            i += 1
    return literals, tags


def names_a_backend(literal, ids):
    for token in re.split(r"[\s,=]+", literal):
        if token in ids or any(token.startswith(b + ":") for b in ids):
            return True
    return False


def places_naming_backends(path, text, ids):
    python = path.endswith(PYTHON) or path.endswith(CMAKE)
    literals, tags = literals_and_tags(text, python)
    found = ["%s:%d: the string literal \"%s\" names a backend" % (path, ln, lit.strip()[:60])
             for ln, lit in literals if names_a_backend(lit, ids)]
    found += ["%s:%d: a shared template line kept for one backend ([%s])" % (path, ln, t)
              for ln, t in tags if any(t.startswith(b) for b in ids)]
    return found


SELF_TEST = (
    "// \"nnc\" in a comment is prose\n"
    "const char* a = \"the fuser\";\n"
    "const char* b = \"jit,nnc\";  // names two\n"
    "#include <x.h>  //[nnc_options]\n"
    "const char* c = R\"(inject:abort@aten::relu)\";\n")


def check_self(ids):
    found = places_naming_backends("self.cpp", SELF_TEST, ids)
    expected = ["self.cpp:3:", "self.cpp:4:", "self.cpp:5:"]
    if sorted(f.split(" ", 1)[0] for f in found) != expected:
        sys.exit("check_backend_names.py: its own check found %s, not lines 3, 4 and 5" % found)
    python = '"""A docstring about nnc."""\nx = "eager"  # "ofi"\n'
    if [f.split(" ", 1)[0] for f in places_naming_backends("self.py", python, ids)] != ["self.py:2:"]:
        sys.exit("check_backend_names.py: its own Python check went wrong")


# The writers know no backend by name, not even in prose: the test backend is the one they used to.
WRITERS_ROOT = "repro"
UNNAMED_IN_WRITERS = re.compile(r"inject", re.I)


def places_in_writers_naming_inject(path, text):
    if not path.startswith(WRITERS_ROOT + os.sep):
        return []
    return ["%s:%d: the writers name the inject backend" % (path, text.count("\n", 0, m.start()) + 1)
            for m in UNNAMED_IN_WRITERS.finditer(text)]


def main():
    root = sys.argv[1]
    ids = backend_ids(root)
    check_self(ids)
    if places_in_writers_naming_inject("repro/x.h", "// an Injected class\n") != ["repro/x.h:1: the writers name the inject backend"]:
        sys.exit("check_backend_names.py: its own check of the writers went wrong")
    found = []
    templates = writer_templates(root)
    for path in source_files(root) + templates:
        with open(os.path.join(root, path), errors="replace") as f:
            text = f.read()
        found += places_in_writers_naming_inject(path, text)
        if path in templates:
            continue  # templates: only the writers' rule (their tags are checked with the sources)
        found += places_naming_backends(path, text, ids)
    for line in found:
        print(line)
    print("%d place(s) outside backends/ and tests/ name a backend (%s)" % (len(found), ", ".join(ids)))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

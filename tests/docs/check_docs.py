#!/usr/bin/env python3
"""Keeps README.md and docs/*.md true to the tree.

For every Markdown file:
  * every relative link and image resolves to a file or folder;
  * every repository path written in backticks (examples/..., tests/...,
    build/tools/...) exists in the source or the build tree;
  * every C or C++ code block that is a whole program (it has a main) is
    compiled with the build tree's bspcc / bspc++ and run with bsprun on
    the pthread engine, and on the MPI engine where it was built;
  * every Python code block that calls superstep.run is run with the given
    interpreter, when that interpreter can import superstep;
  * every command in a shell code block that calls one of the tools
    (bsprun, lpfrun, bspcc, lpfcc, bspprobe, bspprof, ...) uses only options
    that the build tree's tool lists in its --help.

A code block's info string may carry words after the language:
  args=A,B   arguments of the program (commas become spaces)
  procs=N    processes to run it on (default 2)
  norun      compile only (a program that needs input the docs do not give)
  nompi      run on the pthread engine only
Placeholders (PREFIX, <...>, *, {a,b}) are not checked.
"""
import argparse, glob, os, re, shlex, subprocess, sys, tempfile

TOP = ("examples/", "tests/", "src/", "tools/", "bench/", "scripts/", "docs/",
       "include/", "python/", "cmake/")
failures = []
passes = 0


def fail(where, what):
    failures.append(f"{where}: {what}")


def ok():
    global passes
    passes += 1


def placeholder(path):
    return any(c in path for c in "<>*{}[]$") or "PREFIX" in path or "..." in path


def check_links(md, text, src):
    base = os.path.dirname(md)
    for m in re.finditer(r"!?\[[^\]]*\]\(([^)\s]+)\)", text):
        target = m.group(1).split("#", 1)[0]
        if not target or re.match(r"^[a-z]+:", target):
            continue
        p = os.path.normpath(os.path.join(base, target))
        if os.path.exists(p):
            ok()
        else:
            fail(os.path.relpath(md, src), f"dead link '{m.group(1)}'")


def check_paths(md, text, src, build):
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    for m in re.finditer(r"`([^`\s]+)`", prose):
        tok = m.group(1).rstrip(".,:;")
        if placeholder(tok):
            continue
        if tok.startswith(TOP):
            p = os.path.join(src, tok)
        elif tok.startswith("build/") and build:
            p = os.path.join(build, tok[len("build/"):])
        else:
            continue
        if os.path.exists(p):
            ok()
        else:
            fail(os.path.relpath(md, src), f"no such path '{tok}'")


def run(cmd, where, what, timeout=120, env=None):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        fail(where, f"{what}: timed out after {timeout} s")
        return False
    if r.returncode != 0:
        tail = (r.stdout + r.stderr).strip().splitlines()[-5:]
        fail(where, f"{what}: exit {r.returncode}: " + " | ".join(tail))
        return False
    ok()
    return True


def code_blocks(text):
    for m in re.finditer(r"^```([^\n]*)\n(.*?)^```", text, re.S | re.M):
        info = m.group(1).split()
        lang = info[0] if info else ""
        opts = {}
        for w in info[1:]:
            k, _, v = w.partition("=")
            opts[k] = v
        line = text.count("\n", 0, m.start()) + 1
        yield lang, opts, m.group(2), line


def check_programs(md, text, src, build, python, tmp, mpi):
    rel = os.path.relpath(md, src)
    for lang, opts, body, line in code_blocks(text):
        where = f"{rel}:{line}"
        args = opts.get("args", "").replace(",", " ").split()
        procs = opts.get("procs", "2")
        if lang in ("c", "cpp", "c++") and re.search(r"\bmain\s*\(", body):
            if not build:
                continue
            cxx = lang != "c"
            wrapper = os.path.join(build, "tools/bspcc", "bspc++" if cxx else "bspcc")
            srcf = os.path.join(tmp, f"block{line}.{'cpp' if cxx else 'c'}")
            exe = os.path.join(tmp, f"block{line}")
            with open(srcf, "w") as f:
                f.write(body)
            if not run([wrapper, "-O1", "-Wall", "-Wextra", "-Werror", srcf, "-o", exe], where, "compile"):
                continue
            if "norun" in opts:
                continue
            bsprun = os.path.join(build, "tools/bsprun/bsprun")
            run([bsprun, "-n", procs, exe] + args, where, "run on pthread")
            if mpi and "nompi" not in opts:
                run([bsprun, "--engine", "mpi", "-n", procs, exe] + args, where,
                    "run on MPI")
        elif lang == "python" and "superstep.run" in body and python:
            if "norun" in opts:
                continue
            f = os.path.join(tmp, f"block{line}.py")
            with open(f, "w") as fh:
                fh.write(body)
            run([python, f] + args, where, "run with " + python)


TOOLS = {"bsprun": "tools/bsprun/bsprun", "bspcc": "tools/bspcc/bspcc",
         "bspc++": "tools/bspcc/bspc++", "lpfcc": "tools/lpf/lpfcc",
         "lpfcxx": "tools/lpf/lpfcxx", "lpfrun": "tools/lpf/lpfrun",
         "lpfprobe": "tools/lpf/lpfprobe", "bspprobe": "bin/bspprobe",
         "bspprof": "bin/bspprof"}
_helps = {}


def tool_help(build, name):
    if name not in _helps:
        exe = os.path.join(build, TOOLS[name])
        text = None
        if os.access(exe, os.X_OK):
            r = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60,
                               stdin=subprocess.DEVNULL)
            text = r.stdout + r.stderr
        _helps[name] = text
    return _helps[name]


def check_commands(md, text, src, build):
    """Options given to the tools in shell blocks exist in their --help."""
    if not build:
        return
    rel = os.path.relpath(md, src)
    for lang, opts, body, line in code_blocks(text):
        if lang not in ("sh", "bash", "shell", "console"):
            continue
        for k, cmdline in enumerate(body.splitlines()):
            cmdline = re.sub(r"(^|\s)#.*$", "", cmdline).strip()
            try:
                words = shlex.split(cmdline)
            except ValueError:
                continue
            for i, w in enumerate(words):
                name = os.path.basename(w)
                if name not in TOOLS:
                    continue
                helptext = tool_help(build, name)
                if helptext is None:
                    continue
                for o in words[i + 1:]:
                    if o in ("&&", "||", ";", "|", "--") or "/" in o or o.endswith(".py") \
                            or o in ("python3", "python"):
                        break       # the program, or the next command
                    if not o.startswith("-"):
                        continue    # an option's value
                    if placeholder(o) or re.fullmatch(r"-[0-9].*", o) or o == "-" or " " in o:
                        continue    # a placeholder, a number, a quoted value
                    key = o.split("=", 1)[0]
                    if name.startswith("lpf") and key.startswith("-mpirun,"):
                        key = "-mpirun,"
                    if name in ("bspcc", "bspc++", "lpfcc", "lpfcxx") and not key.startswith("--") \
                            and key not in helptext:
                        continue    # compiler flags go to the compiler
                    end = "" if key.endswith(",") else r"($|[\s,=\[\]|])"   # --opt[=VALUE] too
                    if re.search(r"(^|[\s,\[|])" + re.escape(key) + end, helptext, re.M):
                        ok()
                    else:
                        fail("%s:%d" % (rel, line + 1 + k),
                             "%s has no option %s (%s --help)" % (name, key, name))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", required=True)
    ap.add_argument("--build", default="")
    ap.add_argument("--python", default="", help="interpreter that imports superstep")
    ap.add_argument("--mpi", action="store_true", help="also run programs on MPI")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    src = os.path.abspath(a.src)
    files = a.files or [os.path.join(src, "README.md")] + sorted(
        glob.glob(os.path.join(src, "docs", "*.md")))
    python = a.python
    if python and subprocess.run([python, "-c", "import superstep"],
                                 capture_output=True).returncode != 0:
        print(f"check_docs: {python} cannot import superstep: Python blocks not run")
        python = ""
    with tempfile.TemporaryDirectory() as tmp:
        for md in files:
            text = open(md, encoding="utf-8").read()
            check_links(md, text, src)
            check_paths(md, text, src, a.build)
            check_programs(md, text, src, a.build, python, tmp, a.mpi)
            check_commands(md, text, src, a.build)
    for f in failures:
        print("FAIL", f)
    print(f"{passes} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

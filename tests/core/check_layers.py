#!/usr/bin/env python3
"""The core and the engines reach LPF's extensions (src/ext) and the
profiler's analysis (src/prof) only through the tables those fill
(sstep_lpfext, sstep_prof_analysis): no call of any other function defined
there, no include of their headers. Prints each violation; exit 1 if any."""
import pathlib
import re
import sys

src = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2]) / "src"
DEF = re.compile(r"^(?:[A-Za-z_][\w\s\*]*?[\s\*])?([a-z_][a-z0-9_]*)\s*\([^;]*$", re.M)
upper = {}
for layer in ("ext", "prof"):
    for f in (src / layer).glob("*.c"):
        text = re.sub(r"/\*.*?\*/", "", f.read_text(), flags=re.S)
        for m in DEF.finditer(text):
            line = text[text.rfind("\n", 0, m.start()) + 1:text.find("\n", m.start())]
            if line.startswith(("static", " ", "\t", "#", "}")) or "=" in line.split("(")[0]:
                continue
            upper[m.group(1)] = f"src/{layer}/{f.name}"
problems = []
lower = list((src / "core").glob("*.[ch]")) + list((src / "engine").rglob("*.[ch]"))
for f in lower:
    text = re.sub(r"/\*.*?\*/", "", f.read_text(), flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    for no, line in enumerate(text.splitlines(), 1):
        if re.match(r'\s*#\s*include\s*"(\.\./)?(ext|prof)/', line):
            problems.append(f"{f.relative_to(src.parent)}:{no}: includes a header of src/ext or src/prof")
        for name in re.findall(r"\b([a-z_][a-z0-9_]*)\s*\(", line):
            if name in upper:
                problems.append(f"{f.relative_to(src.parent)}:{no}: calls {name} ({upper[name]})")
for p in problems:
    print(p)
print(f"layers: {len(upper)} functions of src/ext and src/prof, {len(lower)} files of the core "
      f"and the engines, {len(problems)} problems")
sys.exit(1 if problems else 0)

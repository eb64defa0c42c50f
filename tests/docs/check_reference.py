#!/usr/bin/env python3
"""The API reference in docs/reference/ against the installed headers.

Every function that a public header declares must appear, with its
declaration, in a code block of the reference page for that header; and no
document a user gets (README, docs/, the manual pages' sources) may point
into material that ships neither with the repository nor the install.
Prints one line per problem and exits 1 if there is any.
"""
import argparse
import pathlib
import re
import sys

PAGES = {
    "include/bsp.h": "docs/reference/bsp.md",
    "include/lpf/core.h": "docs/reference/lpf-core.md",
    "include/lpf/abort.h": "docs/reference/lpf-core.md",
    "include/lpf/pthread.h": "docs/reference/lpf-core.md",
    "include/lpf/mpi.h": "docs/reference/lpf-core.md",
    "include/lpf/hybrid.h": "docs/reference/lpf-core.md",
    "include/lpf/tags.h": "docs/reference/lpf-ext.md",
    "include/lpf/zero.h": "docs/reference/lpf-ext.md",
    "include/lpf/noc.h": "docs/reference/lpf-ext.md",
    "include/pub.h": "docs/reference/pub.md",
}
# implementation details behind a documented name: the Oxford flavour's
# int-typed functions are what bsp_* names in that mode, and the const
# overload of bsp_hpmove is reached through bsp_hpmove itself
HIDDEN = re.compile(r"^(sstep_oxbsp_\w+|sstep_bsp_hpmove_const)$")
DECL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
KEYWORDS = {"if", "for", "while", "return", "sizeof", "defined", "__attribute__",
            "_Generic", "const_cast", "static_cast", "SSTEP_BSP_PRINTF",
            "SSTEP_PUB_PRINTF", "format", "visibility", "noreturn"}


def declared_functions(header: str):
    """Names of the functions a header declares (not macros, not types)."""
    text = re.sub(r"/\*.*?\*/", " ", header, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("#")]
    text = "\n".join(lines)
    names = set()
    for stmt in text.split(";"):
        stmt = stmt.strip()
        if not stmt or stmt.startswith("typedef") or "{" in stmt or "}" in stmt:
            # typedefs (function-pointer types) and bodies are not declarations
            if "{" in stmt and "(" in stmt.split("{")[0] and not stmt.startswith("typedef"):
                head = stmt.split("{")[0]
                m = DECL.findall(head)
                if m and m[0] not in KEYWORDS and not head.strip().startswith(("struct", "extern \"C\"", "namespace", "class")):
                    names.add(m[0])
            continue
        m = DECL.findall(stmt)
        m = [x for x in m if x not in KEYWORDS]
        if m and "(*" not in stmt.split(m[0])[0]:
            names.add(m[0])
    return {n for n in names if not HIDDEN.match(n)}


def code_blocks(md: str):
    return "\n".join(re.findall(r"```[a-z]*\n(.*?)```", md, flags=re.S))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", default=str(pathlib.Path(__file__).resolve().parents[2]))
    src = pathlib.Path(ap.parse_args().src)
    problems = []
    checked = 0
    for header, page in PAGES.items():
        hp, pp = src / header, src / page
        if not hp.exists():
            problems.append(f"{header}: missing")
            continue
        if not pp.exists():
            problems.append(f"{page}: missing (reference of {header})")
            continue
        code = code_blocks(pp.read_text())
        for name in sorted(declared_functions(hp.read_text())):
            checked += 1
            if not re.search(r"\b" + re.escape(name) + r"\s*\(", code):
                problems.append(f"{page}: {name} (declared in {header}) has no declaration in a code block")
    # documents a user gets must stand alone
    user_docs = [src / "README.md"] + sorted((src / "docs").rglob("*.md"))
    user_docs += sorted((src / "tools").rglob("*.h2m")) + sorted((src / "tools").rglob("*.1"))
    for doc in user_docs:
        for no, line in enumerate(doc.read_text(errors="replace").splitlines(), 1):
            if re.search(r"(\.\./)?shared/(spec|design|papers|hooks)\b", line):
                problems.append(f"{doc.relative_to(src)}:{no}: points into shared/, which users do not have")
    for p in problems:
        print(p)
    print(f"reference: {checked} declarations checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

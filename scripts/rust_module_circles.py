#!/usr/bin/env python3
"""Report circles between the modules of the workspace's Rust crates.

    python3 scripts/rust_module_circles.py          # exit 1 if any circle
    python3 scripts/rust_module_circles.py --edges  # also print every edge

A module is a file (``a/b.rs`` or ``a/b/mod.rs`` is ``a::b``) or an inline
``mod name { … }`` (``#[cfg(test)] mod tests`` included: tests are a module
of their own). Module A depends on module B when A's code names an item of
B by a path: a ``use`` (``crate::…``, ``super::…``, ``self::…`` or a child
module's name, brace groups expanded) or a qualified path in an expression
(``crate::streaming::stored::check_moments(p)``). Comments, doc links and
string literals are not code. A path names the deepest module it passes
through.

A module may use its ancestors' items — a submodule is part of its
parent's implementation (``use super::{Item}``) — so edges to an ancestor
are not counted; every other edge is. A circle is a set of modules each of
which depends, directly or not, on every other: each such set is printed
with one cycle through it and the lines that make its edges.

Needs only the standard library: ``scripts/dev.py test`` runs it before
the cargo checks. It first checks itself on a made-up crate.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The crate roots checked: (crate name, lib.rs).
CRATES = (
    ("outprob-core", ROOT / "rust/core/src/lib.rs"),
    ("outprob-python", ROOT / "rust/python/src/lib.rs"),
    ("outprob-fuzz", ROOT / "fuzz/src/lib.rs"),
)

#: A module's path inside its crate: ("streaming", "kll").
ModPath = tuple[str, ...]
#: module → {module it depends on → the first line that says so}.
Edges = dict[ModPath, dict[ModPath, int]]

CHAR_LITERAL = re.compile(r"'(?:\\u\{[0-9a-fA-F]+\}|\\x[0-9a-fA-F]{2}|\\.|[^\\'\n])'")
RAW_STRING = re.compile(r'b?r(#*)"')


def strip(text: str) -> str:
    """`text` with comments removed and string and char literals emptied,
    line breaks kept (so that positions keep their line numbers)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    out.append("\n" if text[i] == "\n" else "")
                    i += 1
        elif (m := RAW_STRING.match(text, i)) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find('"' + m.group(1), m.end())
            end = n if end < 0 else end + 1 + len(m.group(1))
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'" and (m := CHAR_LITERAL.match(text, i)):
            out.append("' '")
            i = m.end()
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching_brace(code: str, start: int) -> int:
    """The index just past the `}` that closes the `{` at `start`."""
    depth = 0
    for i in range(start, len(code)):
        if code[i] == "{":
            depth += 1
        elif code[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(code)


def split_use_tree(tree: str) -> list[list[str]]:
    """`a::b::{c, d::{e, self}}` → [[a, b, c], [a, b, d, e], [a, b, d]]."""
    tree = re.sub(r"\s+as\s+\w+", "", tree)
    tree = re.sub(r"\s+", "", tree)
    paths: list[list[str]] = []

    def walk(prefix: list[str], s: str) -> None:
        if "{" not in s:
            segs = [p for p in s.split("::") if p]
            if segs and segs[-1] == "self":
                segs = segs[:-1]
            if segs and segs[-1] == "*":
                segs = segs[:-1]
            if prefix + segs:
                paths.append(prefix + segs)
            return
        head, _, rest = s.partition("{")
        inner = rest[: rest.rfind("}")]
        base = prefix + [p for p in head.split("::") if p]
        depth, start = 0, 0
        for j, ch in enumerate(inner + ","):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                part = inner[start:j]
                if part:
                    walk(base, part)
                start = j + 1

    walk([], tree)
    return paths


@dataclass
class Module:
    path: ModPath
    file: Path
    code: str = ""
    first_line: int = 1
    children: set[str] = field(default_factory=set)


MOD_DECL = re.compile(r"\bmod\s+(\w+)\s*([;{])")
USE = re.compile(r"\buse\s+([^;]+);")
QUALIFIED = re.compile(r"(?<![\w:])((?:crate|super|self)(?:::\w+)+)")


def collect(lib: Path) -> dict[ModPath, Module]:
    """Every module of the crate rooted at `lib`, its own code (without its
    inline submodules' bodies) and its children's names."""
    modules: dict[ModPath, Module] = {}

    def add(path: ModPath, file: Path, code: str, first_line: int) -> None:
        m = Module(path, file, first_line=first_line)
        modules[path] = m
        own: list[str] = []
        pos = 0
        for d in MOD_DECL.finditer(code):
            if d.start() < pos:
                continue
            name, kind = d.group(1), d.group(2)
            m.children.add(name)
            if kind == "{":
                brace = d.end() - 1
                end = matching_brace(code, brace)
                own.append(code[pos:brace])
                own.append("\n" * code.count("\n", brace, end))
                line = first_line + code.count("\n", 0, brace)
                add(path + (name,), file, code[brace + 1 : end - 1], line)
                pos = end
            else:
                child = child_file(file, path, name)
                if child is not None:
                    add(path + (name,), child, strip(child.read_text(encoding="utf-8")), 1)
        own.append(code[pos:])
        m.code = "".join(own)

    add((), lib, strip(lib.read_text(encoding="utf-8")), 1)
    return modules


def child_file(file: Path, path: ModPath, name: str) -> Path | None:
    """The file of `mod name;` declared in `file` (the module `path`)."""
    if file.name in ("lib.rs", "mod.rs") or not path:
        folder = file.parent
    else:
        folder = file.parent / file.stem
    for candidate in (folder / f"{name}.rs", folder / name / "mod.rs"):
        if candidate.exists():
            return candidate
    return None


def resolve(segs: list[str], here: ModPath, modules: dict[ModPath, Module]) -> ModPath | None:
    """The deepest module a path from module `here` passes through, or None
    for another crate's."""
    if not segs:
        return None
    base: ModPath
    if segs[0] == "crate":
        base, rest = (), segs[1:]
    elif segs[0] in ("super", "self"):
        base = here
        i = 0
        while i < len(segs) and segs[i] in ("super", "self"):
            if segs[i] == "super":
                base = base[:-1]
            i += 1
        rest = segs[i:]
    elif segs[0] in modules[here].children:
        base, rest = here, segs
    else:
        return None
    target = base
    for s in rest:
        if target + (s,) in modules:
            target = target + (s,)
        else:
            break
    return target


def edges_of(modules: dict[ModPath, Module]) -> Edges:
    """Each module's dependencies (see ``Edges``)."""
    edges: Edges = {p: {} for p in modules}
    for here, m in modules.items():
        found: list[tuple[list[str], int]] = []
        for u in USE.finditer(m.code):
            line = m.first_line + m.code.count("\n", 0, u.start())
            found += [(p, line) for p in split_use_tree(u.group(1))]
        for q in QUALIFIED.finditer(m.code):
            line = m.first_line + m.code.count("\n", 0, q.start())
            found.append((q.group(1).split("::"), line))
        for segs, line in found:
            target = resolve(segs, here, modules)
            if target is None or target == here or here[: len(target)] == target:
                continue  # another crate, itself, or an ancestor
            edges[here].setdefault(target, line)
    return edges


def circles(edges: Edges) -> list[list[ModPath]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[ModPath, int] = {}
    low: dict[ModPath, int] = {}
    stack: list[ModPath] = []
    on: set[ModPath] = set()
    out: list[list[ModPath]] = []
    counter = [0]

    def visit(v: ModPath) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def cycle_in(comp: list[ModPath], edges: Edges) -> list[ModPath]:
    """One cycle through the component's first module."""
    members = set(comp)
    start = comp[0]
    prev: dict[ModPath, ModPath] = {}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(edges[v]):
            if w not in members:
                continue
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return [start]


def self_test() -> None:
    """The checker on a made-up crate: a circle through a `use` and a
    qualified path, and what is not one (an ancestor's item, a comment, a
    string, a test module, another crate)."""
    import tempfile

    files = {
        "lib.rs": "pub mod a;\npub mod b;\npub mod c;\n",
        "a.rs": "use crate::b::{X, self as bee};\npub fn g() {}\n",
        "b.rs": "pub struct X;\nfn f() { crate::a::g(); }\n",
        "c.rs": ('pub mod d;\nuse d::Y;\npub struct Z;\n// crate::a::g\n'
                 'const S: &str = "crate::a::g";\n'
                 "#[cfg(test)]\nmod tests {\n    use crate::a::g;\n}\n"),
        "c/d.rs": "use super::Z;\nuse std::fmt;\npub struct Y;\n",
    }
    with tempfile.TemporaryDirectory() as d:
        for rel, text in files.items():
            (Path(d) / rel).parent.mkdir(parents=True, exist_ok=True)
            (Path(d) / rel).write_text(text)
        modules = collect(Path(d) / "lib.rs")
        edges = edges_of(modules)
    assert set(modules) == {(), ("a",), ("b",), ("c",), ("c", "d"), ("c", "tests")}, modules
    assert circles(edges) == [[("a",), ("b",)]], circles(edges)
    assert edges[("c",)] == {("c", "d"): 2} and edges[("c", "d")] == {}, edges
    assert edges[("c", "tests")] == {("a",): 8}, edges


def name(crate: str, path: ModPath) -> str:
    return "::".join((crate,) + path)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--edges", action="store_true", help="print every counted edge")
    args = ap.parse_args()
    self_test()
    found = 0
    for crate, lib in CRATES:
        if not lib.exists():
            continue
        modules = collect(lib)
        edges = edges_of(modules)
        if args.edges:
            for v in sorted(edges):
                for w, line in sorted(edges[v].items()):
                    rel = modules[v].file.relative_to(ROOT)
                    print(f"{name(crate, v)} -> {name(crate, w)}  ({rel}:{line})")
        for comp in circles(edges):
            found += 1
            cycle = cycle_in(comp, edges)
            print(f"circle in {crate}: {', '.join(name(crate, p) for p in comp)}")
            for a, b in zip(cycle, cycle[1:]):
                rel = modules[a].file.relative_to(ROOT)
                print(f"  {name(crate, a)} -> {name(crate, b)}  ({rel}:{edges[a][b]})")
    if found:
        print(f"{found} module circle(s)", file=sys.stderr)
        return 1
    print("no module circles in " + ", ".join(c for c, lib in CRATES if lib.exists()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

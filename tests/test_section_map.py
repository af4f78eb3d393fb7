"""The map from the contract to its tests (tests/README.md) stays true: every
section (``## §N``) and subsection (``###``) of docs/contract.md has a row
naming at least one test file, every test file sits in the folder of its
section, cites that section in its docstring and appears in the map, and
every file the map names exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
FILE = re.compile(r"`((?:s\d\d_[a-z0-9_]+/)?test_[a-z0-9_]+\.py)`")
FOLDER = re.compile(r"s(\d\d)_[a-z0-9_]+")


def contract() -> dict[int, tuple[str, list[str]]]:
    """§N → (its title, the titles of its ### subsections)."""
    sections: dict[int, tuple[str, list[str]]] = {}
    current = None
    for line in (ROOT / "docs" / "contract.md").read_text(encoding="utf-8").splitlines():
        if m := re.fullmatch(r"## §(\d+) (.+)", line):
            current = int(m.group(1))
            sections[current] = (m.group(2).strip(), [])
        elif line.startswith("## "):
            current = None
        elif (m := re.fullmatch(r"### (.+)", line)) and current is not None:
            sections[current][1].append(m.group(1).strip())
    return sections


def map_rows() -> list[tuple[str, list[str]]]:
    """The rows of the map table: (first cell, the test files named)."""
    text = (TESTS / "README.md").read_text(encoding="utf-8")
    table = text[text.index("## Map"):]
    rows = []
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0] not in ("contract", "---"):
            rows.append((cells[0], FILE.findall(cells[1])))
    return rows


def all_test_files() -> list[str]:
    return sorted(str(p.relative_to(TESTS)) for p in TESTS.rglob("test_*.py"))


def rows_by_section() -> dict[tuple[int, str | None], list[str]]:
    """(N, None) for a row of §N, (N, subsection) for a row of a subsection."""
    sections = contract()
    found: dict[tuple[int, str | None], list[str]] = {}
    for cell, files in map_rows():
        if cell == "this map":
            continue
        m = re.fullmatch(r"§(\d+)(?: · (.+)| (.+))", cell)
        assert m, f"tests/README.md: a row of the map must start with §N: {cell!r}"
        n = int(m.group(1))
        assert n in sections, f"tests/README.md names §{n}, which docs/contract.md does not have"
        title, subsections = sections[n]
        if m.group(2) is not None:
            assert m.group(2) in subsections, (
                f"tests/README.md: §{n} has no subsection titled {m.group(2)!r} in docs/contract.md"
            )
            key: tuple[int, str | None] = (n, m.group(2))
        else:
            assert m.group(3) == title, f"tests/README.md: §{n} is titled {title!r} in docs/contract.md"
            key = (n, None)
        assert key not in found, f"tests/README.md: two rows for {cell!r}"
        found[key] = files
    return found


def test_every_section_and_subsection_of_the_contract_has_tests():
    found = rows_by_section()
    for n, (title, subsections) in contract().items():
        assert found.get((n, None)), f"§{n} {title}: no row with a test file in tests/README.md"
        for sub in subsections:
            assert (n, sub) in found, f"§{n} · {sub}: no row in tests/README.md"
            assert found[(n, sub)] or "(not added)" in sub, f"§{n} · {sub}: no test file named"


def test_every_file_the_map_names_exists():
    for cell, files in map_rows():
        for f in files:
            assert (TESTS / f).is_file(), f"tests/README.md ({cell}) names {f}, which does not exist"


def test_every_test_file_is_in_the_map():
    named = {f for _, files in map_rows() for f in files}
    missing = [f for f in all_test_files() if f not in named]
    assert not missing, f"test files not in the map of tests/README.md: {missing}"


@pytest.mark.parametrize("path", [f for f in all_test_files() if f != "test_section_map.py"])
def test_each_file_sits_in_its_section_and_cites_it(path):
    parts = Path(path).parts
    assert len(parts) == 2 and FOLDER.fullmatch(parts[0]), (
        f"tests/{path}: a test file belongs in the folder of its contract section, tests/sNN_topic/"
    )
    n = int(FOLDER.fullmatch(parts[0]).group(1))
    assert n in contract(), f"tests/{parts[0]}/: docs/contract.md has no §{n}"
    doc = ast.get_docstring(ast.parse((TESTS / path).read_text(encoding="utf-8"))) or ""
    assert re.search(rf"§{n}(?!\d)", doc), f"tests/{path}: its docstring does not cite §{n}"
    own = [files for (m, _), files in rows_by_section().items() if m == n]
    assert any(path in files for files in own), f"tests/{path}: not listed under §{n} in tests/README.md"


def test_the_contract_links_the_map():
    intro = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8").split("\n## ", 1)[0]
    assert "tests/README.md" in intro

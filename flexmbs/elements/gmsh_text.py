"""The checks of a gmsh ASCII mesh file (formats 2.2 and 4.1) read before meshio reads
it, so that a damaged file is refused with its line and what was expected there: the
sections closed ($Nodes .. $EndNodes), the counts their headers give, each node line
a tag and three finite numbers, each tag once, each element line as many nodes as its
type has, each node it names defined.

`check_gmsh_text(path)` raises ValueError with the line, for the caller to add the file
and the item; a binary gmsh file (file-type 1) is left to meshio."""

from __future__ import annotations

import math
from pathlib import Path

__all__ = ["check_gmsh_text", "GMSH_NODES_PER_ELEMENT"]

GMSH_NODES_PER_ELEMENT = {
    1: 2,
    2: 3,
    3: 4,
    4: 4,
    5: 8,
    6: 6,
    7: 5,
    8: 3,
    9: 6,
    10: 9,
    11: 10,
    12: 27,
    13: 18,
    14: 14,
    15: 1,
    16: 8,
    17: 20,
    18: 15,
    19: 13,
    20: 9,
    21: 10,
    29: 20,
}  # gmsh's element types: 4 the linear tetrahedron, 11 the quadratic one
"""Nodes of an element of each gmsh type (gmsh's reference manual, "MSH file format")."""


class _Lines:
    """The file's lines with their numbers (from 1), read one at a time."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.k = 0

    def next(self, what: str) -> tuple[int, str]:
        if self.k >= len(self.lines):
            raise ValueError(
                f"the file ends at line {len(self.lines)} where {what} was expected "
                "(is it cut short?)"
            )
        self.k += 1
        return self.k, self.lines[self.k - 1].strip()

    def numbers(self, what: str, count: int | None = None) -> tuple[int, list[str]]:
        k, line = self.next(what)
        if line.startswith("$"):
            raise ValueError(
                f"line {k}: expected {what}, got {line!r} (a count of the "
                "section's header larger than its lines?)"
            )
        parts = line.split()
        if count is not None and len(parts) != count:
            raise ValueError(f"line {k}: expected {what}, got {line!r}")
        return k, parts


def _int(text: str, k: int, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"line {k}: expected {what} (an integer), got {text!r}") from None


def _coordinates(parts: list[str], k: int) -> None:
    try:
        xyz = [float(v) for v in parts]
    except ValueError:
        raise ValueError(
            f"line {k}: expected a node's x y z (numbers), got {' '.join(parts)!r}"
        ) from None
    if not all(math.isfinite(v) for v in xyz):
        raise ValueError(f"line {k}: expected finite coordinates, got {' '.join(parts)!r}")


def _end(lines: _Lines, section: str) -> None:
    k, line = lines.next(f"$End{section}")
    if line != f"$End{section}":
        raise ValueError(
            f"line {k}: expected $End{section} (the count of the section's header "
            f"is smaller than its lines?), got {line[:60]!r}"
        )


def _nodes(lines: _Lines, version: int, tags: dict[int, int]) -> None:
    def node(tag: int, k: int) -> None:
        if tag in tags:
            raise ValueError(
                f"line {k}: node {tag} is defined twice (first at line "
                f"{tags[tag]}): expected each node tag once"
            )
        tags[tag] = k

    if version == 2:
        _, head = lines.numbers("the number of nodes", 1)
        for _ in range(_int(head[0], lines.k, "the number of nodes")):
            k, parts = lines.numbers("a node line: tag x y z", 4)
            node(_int(parts[0], k, "a node tag"), k)
            _coordinates(parts[1:], k)
    else:
        k, head = lines.numbers("numEntityBlocks numNodes minNodeTag maxNodeTag", 4)
        for _ in range(_int(head[0], k, "the number of entity blocks")):
            k, block = lines.numbers("an entity block: entityDim entityTag parametric numNodes", 4)
            if block[2] != "0":
                raise ValueError(f"line {k}: parametric nodes are not read (expected 0)")
            count = _int(block[3], k, "the block's number of nodes")
            block_tags = [lines.numbers("a node tag", 1) for _ in range(count)]
            for k, parts in block_tags:
                node(_int(parts[0], k, "a node tag"), k)
            for _ in range(count):
                k, parts = lines.numbers("a node's x y z", 3)
                _coordinates(parts, k)
    _end(lines, "Nodes")


def _element(parts: list[str], k: int, kind: int, nodes: list[str], tags: dict[int, int]) -> None:
    expected = GMSH_NODES_PER_ELEMENT.get(kind)
    if expected is not None and len(nodes) != expected:
        raise ValueError(
            f"line {k}: element {parts[0]} of type {kind} has {len(nodes)} nodes, "
            f"expected {expected}"
        )
    for v in nodes:
        if _int(v, k, "a node tag") not in tags:
            raise ValueError(
                f"line {k}: element {parts[0]} names node {v}, which $Nodes does not define"
            )


def _elements(lines: _Lines, version: int, tags: dict[int, int]) -> None:
    if version == 2:
        _, head = lines.numbers("the number of elements", 1)
        for _ in range(_int(head[0], lines.k, "the number of elements")):
            k, parts = lines.numbers("an element line: tag type ntags tags.. nodes..")
            if len(parts) < 3:
                raise ValueError(
                    f"line {k}: expected an element line (tag type ntags tags.. "
                    f"nodes..), got {' '.join(parts)!r}"
                )
            kind = _int(parts[1], k, "an element type")
            ntags = _int(parts[2], k, "the number of tags")
            _element(parts, k, kind, parts[3 + ntags :], tags)
    else:
        k, head = lines.numbers("numEntityBlocks numElements minTag maxTag", 4)
        for _ in range(_int(head[0], k, "the number of entity blocks")):
            k, block = lines.numbers("an entity block: entityDim entityTag type numElements", 4)
            kind = _int(block[2], k, "an element type")
            for _ in range(_int(block[3], k, "the block's number of elements")):
                k, parts = lines.numbers("an element line: tag nodes..")
                _element(parts, k, kind, parts[1:], tags)
    _end(lines, "Elements")


def check_gmsh_text(path: Path) -> None:
    """Check a gmsh file (.msh) written as text (module docstring); ValueError with the
    line."""
    raw = path.read_bytes()
    if not raw.strip():
        raise ValueError("the file is empty: expected a gmsh mesh")
    if not raw.lstrip().startswith(b"$MeshFormat"):
        what = "a binary file" if b"\0" in raw[:4096] or _not_text(raw[:4096]) else "a file"
        raise ValueError(f"{what} that does not begin with $MeshFormat: expected a gmsh mesh")
    head = raw.lstrip().split(b"\n", 2)
    if len(head) > 1 and head[1].split()[1:2] == [b"1"]:
        return None  # a binary gmsh file: meshio reads it
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise ValueError(
            f"line {line}: bytes that are not text in a gmsh file written as text (file-type 0)"
        ) from None
    lines = _Lines(text)
    lines.next("$MeshFormat")
    k, fmt = lines.numbers("version file-type data-size", 3)
    version = int(float(fmt[0])) if fmt[0].replace(".", "", 1).isdigit() else 0
    if version not in (2, 4):
        raise ValueError(f"line {k}: gmsh format {fmt[0]}: expected 2.2 or 4.1")
    _end(lines, "MeshFormat")
    tags: dict[int, int] = {}
    while lines.k < len(lines.lines):
        k, section = lines.next("a section")
        if section == "$Nodes":
            _nodes(lines, version, tags)
        elif section == "$Elements":
            if not tags:
                raise ValueError(f"line {k}: $Elements before any $Nodes")
            _elements(lines, version, tags)
        elif section.startswith("$") and not section.startswith("$End"):
            name = section[1:]
            while lines.next(f"$End{name}")[1] != f"$End{name}":
                pass
    if not tags:
        raise ValueError("no $Nodes section: expected a mesh's nodes and elements")
    return None


def _not_text(head: bytes) -> bool:
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as err:
        return err.start < len(head) - 4  # not a character cut at the end of the sample
    return False

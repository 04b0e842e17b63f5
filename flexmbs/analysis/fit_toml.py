"""Model-file text for a fit: TOML values and keys, values set in a model file's text
(its comments and layout kept), and the fitted model file.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

OFFSET_NAME = "offset"  # the name of a record's time offset among the fitted values

BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
HEADER = re.compile(r"^\s*\[(?P<path>[^\[\]]+)\]\s*(#.*)?$")


def _keys(path: str) -> list[str]:
    return [k.strip() for k in path.split(".")]


def _toml_value_of_text(text: str) -> object:
    try:
        return tomllib.loads("v = " + text)["v"]
    except tomllib.TOMLDecodeError:
        return text


def _child(table: object, key: str) -> object:
    """table[key] of a table, or of an array by its 0-based index; KeyError without."""
    if isinstance(table, dict) and key in table:
        return table[key]
    if isinstance(table, list) and key.isdigit() and int(key) < len(table):
        return table[int(key)]
    raise KeyError(key)


def _assign(doc: dict[str, Any], keys: Sequence[str], value: object) -> None:
    table: Any = doc
    for key in keys[:-1]:
        if isinstance(table, dict):
            table = table.setdefault(key, {})
        else:
            try:
                table = _child(table, key)
            except KeyError:
                return
    if isinstance(table, dict):
        table[keys[-1]] = value
    elif isinstance(table, list) and keys[-1].isdigit() and int(keys[-1]) < len(table):
        table[int(keys[-1])] = value


def _document(text: str, overrides: Iterable[str]) -> dict[str, Any]:
    """The parsed model file with the --set overrides applied (already checked by the
    reader: the model was loaded with them)."""
    doc = tomllib.loads(text)
    for override in overrides:
        path, _, value = str(override).partition("=")
        _assign(doc, _keys(path), _toml_value_of_text(value.strip()))
    return doc


def _toml_key(key: str) -> str:
    return key if BARE_KEY.match(key) else json.dumps(key)


def toml_value(value: object) -> str:
    """A Python value as TOML text (numbers, booleans, strings, lists, tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def _split_dotted(text: str) -> list[str]:
    keys, doc = [], tomllib.loads(f"[{text}]\n")
    while isinstance(doc, dict) and len(doc) == 1:
        key = next(iter(doc))
        keys.append(key)
        doc = doc[key]
    return keys


def _dump_toml(doc: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> list[str]:
    """A whole document as TOML text: plain keys first, then each table under its
    header (used when the file's own text cannot be edited in place)."""
    lines = []
    plain = {k: v for k, v in doc.items() if not isinstance(v, dict)}
    tables = {k: v for k, v in doc.items() if isinstance(v, dict)}
    if prefix and (plain or not tables):
        lines.append("[" + ".".join(_toml_key(k) for k in prefix) + "]")
    lines += [f"{_toml_key(k)} = {toml_value(v)}" for k, v in plain.items()]
    if plain:
        lines.append("")
    for k, v in tables.items():
        lines += _dump_toml(v, prefix + (k,))
    return lines


def set_toml_values(
    text: str, assignments: Mapping[str, object], keep_comments: bool = True
) -> str:
    """The TOML `text` with the values at the dotted paths of `assignments` (path ->
    value) replaced, keeping the rest of the text and its comments. A value whose key
    is not written under its table's header is added after the header, a table without
    a header gets one at the end; when the text cannot be edited so (e.g. an inline
    table), the document is written out anew without its comments. The result always
    parses to the original document with the assignments made. keep_comments=False
    drops the comment at the end of each line whose value it replaces (it described
    the old value)."""
    expected = tomllib.loads(text)
    for path, value in assignments.items():
        _assign(expected, _keys(path), value)
    lines = text.splitlines()
    for path, value in assignments.items():
        keys = _keys(path)
        if not _edit_line(lines, keys[:-1], keys[-1], toml_value(value), keep_comments):
            lines += [
                "",
                "[" + ".".join(_toml_key(k) for k in keys[:-1]) + "]",
                f"{_toml_key(keys[-1])} = {toml_value(value)}",
            ]
    edited = "\n".join(lines) + "\n"
    try:
        if tomllib.loads(edited) == expected:
            return edited
    except tomllib.TOMLDecodeError:
        pass
    return "\n".join(_dump_toml(expected)).rstrip() + "\n"


def _edit_line(
    lines: list[str], table: Sequence[str], key: str, value_text: str, keep_comment: bool = True
) -> bool:
    """Replace (or add) `key = value` under the header [table]; False when the file has
    no such header."""
    start = None
    for i, line in enumerate(lines):
        m = HEADER.match(line)
        if m:
            if start is not None:
                end = i
                break
            try:
                if _split_dotted(m.group("path")) == table:
                    start = i
            except tomllib.TOMLDecodeError:
                continue
    else:
        end = len(lines)
    if start is None:
        return False
    key_pattern = re.compile(
        r"^(?P<lead>\s*(?:"
        + re.escape(key)
        + '|"'
        + re.escape(key)
        + "\"|'"
        + re.escape(key)
        + r"')\s*=\s*)(?P<value>[^#]*?)"
        r"(?P<tail>\s*(#.*)?)$"
    )
    for i in range(start + 1, end):
        m = key_pattern.match(lines[i])
        if m:
            lines[i] = m.group("lead") + value_text + (m.group("tail") if keep_comment else "")
            return True
    lines.insert(start + 1, f"{_toml_key(key)} = {value_text}")
    return True

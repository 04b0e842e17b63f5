"""The command-line reference from flexmbs's own argument parser (flexmbs.cli), so that
it lists every command and option the program takes:

    .venv/bin/python docs/reference/make_command_line.py          # write the pages
    .venv/bin/python docs/reference/make_command_line.py --check  # exit 1 if stale

It writes docs/reference/command-line-options.md (each command: its usage, and a table
of its arguments and options with their values, defaults and meanings) and the
synopsis at the top of docs/reference/command-line.md, between its two markers. The
text is laid out here, not by argparse's help formatter, so that it does not depend on
the terminal's width or the Python version."""

import argparse
import sys
from pathlib import Path

from flexmbs.cli import _parser

HERE = Path(__file__).resolve().parent
OPTIONS_PAGE = HERE / "command-line-options.md"
SYNOPSIS_PAGE = HERE / "command-line.md"
BEGIN = "<!-- synopsis: written by docs/reference/make_command_line.py from flexmbs.cli -->"
END = "<!-- end of the synopsis -->"
WIDTH = 88


def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The subcommands' parsers, by name, in the order `flexmbs --help` lists them."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices.items())


def command_help(parser: argparse.ArgumentParser) -> dict[str, str]:
    """The one-line help of each subcommand."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {a.dest: a.help or "" for a in sub._choices_actions}


def _arguments(p: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in p._actions if not isinstance(a, argparse._HelpAction)]


def _value(a: argparse.Action) -> str:
    """The value an option takes, as the usage writes it ("" for a flag)."""
    if a.nargs == 0:
        return ""
    if a.metavar is not None:
        names = a.metavar if isinstance(a.metavar, tuple) else (a.metavar,)
        return " ".join(names)
    if a.choices is not None:
        return "|".join(str(c) for c in a.choices)
    return a.dest.upper()


def _usage_part(a: argparse.Action) -> str:
    if not a.option_strings:
        name = a.metavar or a.dest.upper()
        return {"*": f"[{name} ...]", "+": f"{name} [{name} ...]", "?": f"[{name}]"}.get(
            str(a.nargs), name
        )
    short = [s for s in a.option_strings if not s.startswith("--")]
    text = short[0] if short else a.option_strings[0]
    value = _value(a)
    text += f" {value}" if value else ""
    if isinstance(a, argparse._AppendAction):
        text += " ..."
    return text if a.required else f"[{text}]"


def usage(name: str, p: argparse.ArgumentParser) -> str:
    """`flexmbs NAME ARGS [OPTIONS]`, wrapped at WIDTH with its continuation indented."""
    prog = f"flexmbs {name}"
    parts = [_usage_part(a) for a in _arguments(p) if not a.option_strings]
    parts += [_usage_part(a) for a in _arguments(p) if a.option_strings]
    lines = [parts[0]] if parts else [""]
    for part in parts[1:]:  # each argument whole on its line
        if len(lines[-1]) + 1 + len(part) > WIDTH - len(prog) - 1:
            lines.append(part)
        else:
            lines[-1] = (lines[-1] + " " + part).strip()
    return "\n".join(
        (prog if k == 0 else " " * len(prog)) + " " + line for k, line in enumerate(lines)
    )


def _default(a: argparse.Action) -> str:
    if a.nargs == 0 or a.default is None or a.default == argparse.SUPPRESS:
        return ""
    if isinstance(a.default, (tuple, list)):
        return "`" + " ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in a.default) + "`"
    if isinstance(a.default, float):
        return f"`{a.default:g}`"
    return f"`{a.default}`"


def _cell(text: str) -> str:
    """Text for a table cell: on one line, its bars escaped, and its double hyphens
    kept as written (not typeset as a dash)."""
    return " ".join(text.split()).replace("|", "\\|").replace("--", "\\-\\-")


def options_page(parser: argparse.ArgumentParser) -> str:
    helps = command_help(parser)
    out = [
        "# Command-line options",
        "",
        "Every command of `flexmbs` and every option it takes, written from the program's",
        "own argument parser by `docs/reference/make_command_line.py` (a test keeps the two",
        "the same). What the commands do, their exit statuses and their outputs:",
        "[the command line](command-line.md).",
        "",
        "    flexmbs --version",
        "    flexmbs COMMAND --help",
    ]
    for name, p in commands(parser).items():
        help_text = _cell(helps.get(name, ""))
        out += ["", f"## `flexmbs {name}`", "", help_text[:1].upper() + help_text[1:] + ".", ""]
        out += ["    " + line for line in usage(name, p).splitlines()]
        out += ["", "| argument | value | default | meaning |", "|---|---|---|---|"]
        for a in _arguments(p):
            names = ", ".join(f"`{s}`" for s in a.option_strings) or f"`{a.metavar or a.dest}`"
            value = _value(a) if a.option_strings else ("several" if a.nargs == "*" else "")
            if isinstance(a, argparse._AppendAction):
                value += " (repeatable)"
            required = " (required)" if a.required and a.option_strings else ""
            out.append(
                f"| {names}{required} | {_cell(value)} | {_default(a)} | {_cell(a.help or '')} |"
            )
    return "\n".join(out) + "\n"


def synopsis(parser: argparse.ArgumentParser) -> str:
    lines = [usage(name, p) for name, p in commands(parser).items()]
    body = "\n".join("    " + line for u in lines for line in u.splitlines())
    return f"{BEGIN}\n\n{body}\n\n{END}"


def with_synopsis(page: str, parser: argparse.ArgumentParser) -> str:
    """`page` with the text between its markers replaced by the synopsis."""
    start, end = page.index(BEGIN), page.index(END) + len(END)
    return page[:start] + synopsis(parser) + page[end:]


def pages() -> dict[Path, str]:
    """The text each page should hold."""
    parser = _parser()
    return {
        OPTIONS_PAGE: options_page(parser),
        SYNOPSIS_PAGE: with_synopsis(SYNOPSIS_PAGE.read_text(), parser),
    }


def main() -> int:
    check = "--check" in sys.argv[1:]
    stale = []
    for path, text in pages().items():
        if path.exists() and path.read_text() == text:
            continue
        stale.append(path)
        if not check:
            path.write_text(text)
    for path in stale:
        print(f"{path}: {'out of date' if check else 'written'}")
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main())

"""The progress bar of `flexmbs run`: on a terminal it shows simulated time, rate and
steps; with -q, or when stderr is not a terminal (a log file, a pipe), nothing."""

import io
from pathlib import Path

import pytest

from flexmbs.cli import main

H2 = Path(__file__).resolve().parents[1] / "data" / "models" / "huang_two_link.toml"
SHORT = ["--set", "solver.t_end=0.02", "--set", "output.step=0.01"]


class Terminal(io.StringIO):
    def isatty(self):
        return True


class Log(io.StringIO):
    def isatty(self):
        return False


@pytest.mark.parametrize("stream, quiet, shown", [(Terminal, False, True),
                                                  (Terminal, True, False),
                                                  (Log, False, False)])
def test_the_bar_is_shown_on_a_terminal_only(monkeypatch, tmp_path, stream, quiet, shown):
    err = stream()
    monkeypatch.setattr("sys.stderr", err)
    args = ["run", str(H2), "-o", str(tmp_path / "h2.h5"), *SHORT] + (["-q"] if quiet else [])
    assert main(args) == 0
    text = err.getvalue()
    assert ("100%|" in text and "t = 0.02/0.02 s" in text and " steps" in text) == shown

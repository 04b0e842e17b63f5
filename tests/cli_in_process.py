"""`flexmbs ARGS` run in the test's own process, without the start-up of a new one (its
imports and the loading of cached kernels): refusals, read-only commands and short
runs; runs that signals, pipes or resource limits end keep a process of their own."""

import subprocess

from flexmbs.cli import main


def flexmbs_here(capsys, *args):
    """A CompletedProcess of `flexmbs ARGS` (exit status, stdout, stderr) run by
    flexmbs.cli.main in this process; `capsys` is pytest's fixture."""
    argv = [str(a) for a in args]
    capsys.readouterr()
    try:
        status = main(argv)
    except SystemExit as exc:  # argparse's errors and --help
        status = 0 if exc.code is None else exc.code
    captured = capsys.readouterr()
    return subprocess.CompletedProcess(["flexmbs", *argv], status, captured.out, captured.err)

"""`flexmbs ARGS` run in the test's own process: the command line's refusals without
the start-up of a new process (its imports and the loading of cached kernels)."""

import subprocess

from flexmbs.cli import main


def flexmbs_here(capsys, *args):
    """A CompletedProcess of `flexmbs ARGS` (exit status, stdout, stderr) run by
    flexmbs.cli.main in this process; `capsys` is pytest's fixture."""
    argv = [str(a) for a in args]
    capsys.readouterr()
    try:
        status = main(argv)
    except SystemExit as exc:  # argparse's errors
        status = exc.code
    captured = capsys.readouterr()
    return subprocess.CompletedProcess(["flexmbs", *argv], status, captured.out, captured.err)

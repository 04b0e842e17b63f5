"""`python -m flexmbs` is the `flexmbs` command; `command` is the console script's entry.

A command is a process of its own: when it has done its work (its files closed), the
objects it made, some hundred thousand of them from importing numpy, h5py, numba and
the package, are frozen (`gc.freeze`), so that the interpreter's exit does not
traverse them in its last garbage collections only for the system to take the memory
back (0.13 s of a warm run of 0.7 s).
"""

import gc
import sys


def command() -> int:
    """Run the `flexmbs` command line (flexmbs.cli.main) as this process's work and
    return its exit status."""
    from .cli import main

    try:
        return main()
    finally:
        gc.freeze()


if __name__ == "__main__":
    sys.exit(command())

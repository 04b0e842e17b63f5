"""Errors that reach the user.

`ModelError` names where a bad input was found (file, item, field) and what was
expected; the command line prints it on one line and exits with status 2.
`ExperimentError` does the same for experiment files and channel maps (the item is a
line of a CSV file, a channel or a section of a map).
"""

__all__ = [
    "FlexmbsError",
    "ModelError",
    "ResultFileError",
    "ExperimentError",
    "RunTerminated",
    "FlexmbsWarning",
    "PlausibilityWarning",
    "ResultFileWarning",
    "NotEquilibriumWarning",
    "one_line",
]


def one_line(text):
    """`text` with the characters that would break or hide a line of a message (line
    breaks, tabs, other control and format characters) written as their escapes
    (``\\n``, ``\\t``, ``\\x1b``), so that a user's text quoted in a message keeps it
    on one line."""
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text
    )


class FlexmbsError(Exception):
    """Base class of the errors flexmbs reports to the user without a traceback."""


class ModelError(FlexmbsError, ValueError):
    """A model description that cannot be used.

    Parameters
    ----------
    message : what is wrong and what was expected.
    item : the item, e.g. ``joint "j2"``; ``None`` for the file as a whole.
    field : the field of the item, e.g. ``axis``.
    source : the file (or ``"<python>"`` for the builder API).
    """

    def __init__(self, message, item=None, field=None, source=None):
        self.message = message
        self.item = item
        self.field = field
        self.source = source
        super().__init__(self._text())

    def _text(self):
        where = []
        if self.source:
            where.append(str(self.source))
        if self.item:
            where.append(self.item)
        if self.field:
            where.append(f'field "{self.field}"')
        return one_line((": ".join(where) + ": " if where else "") + self.message)

    def with_source(self, source):
        """The same error, attributed to `source` if it has none yet."""
        if self.source is None:
            self.source = source
            self.args = (self._text(),)
        return self

    def __str__(self):
        return self._text()


class ResultFileError(FlexmbsError):
    """A result file that is missing, unreadable or not written by flexmbs."""


class FlexmbsWarning(UserWarning):
    """Base class of what flexmbs warns about; the command line prints each on one line
    ("flexmbs: warning: ...")."""


class PlausibilityWarning(FlexmbsWarning):
    """A value of a model file that is legal but unlikely in SI units: the mark of a
    common unit mistake (flexmbs.checks.plausibility)."""


class ResultFileWarning(FlexmbsWarning):
    """A result file that is read, but not whole (its series differ in length)."""


class NotEquilibriumWarning(FlexmbsWarning):
    """A linear model (a state-space model for control design) taken about a state
    that is not an equilibrium: its matrices hold at that instant only."""


class ResultWriteError(FlexmbsError):
    """A result file that could not be written on (a full disk, a file-size limit, an
    I/O error): the run stops, and the file keeps what was committed and the reason."""


class ExperimentError(FlexmbsError, ValueError):
    """An experiment file or a channel map that cannot be used.

    Parameters
    ----------
    message : what is wrong and what was expected.
    item : where in the file, e.g. ``line 12``, ``channel "pot1"`` or
        ``section "alignment"``; ``None`` for the file as a whole.
    field : the field, e.g. ``gain`` (a map) or ``time`` (a column of a CSV file).
    source : the file.
    """

    def __init__(self, message, item=None, field=None, source=None):
        self.message = message
        self.item = item
        self.field = field
        self.source = source
        super().__init__(self._text())

    def _text(self):
        where = [str(x) for x in (self.source, self.item) if x]
        if self.field:
            where.append(f'field "{self.field}"')
        return (": ".join(where) + ": " if where else "") + self.message

    def with_source(self, source):
        """The same error, attributed to `source` if it has none yet."""
        if self.source is None:
            self.source = source
            self.args = (self._text(),)
        return self

    def __str__(self):
        return self._text()


class RunTerminated(KeyboardInterrupt):
    """A run ended by a signal other than Ctrl-C (SIGTERM, which batch schedulers and
    `timeout` send, or SIGHUP): handled as an interrupt, the signal's name kept
    (`signame`) for the result file's status and the exit status 128 + `signum`."""

    def __init__(self, signum):
        import signal

        self.signum = int(signum)
        self.signame = signal.Signals(signum).name
        super().__init__(f"terminated by {self.signame}")

"""Moved to flexmbs.kinematics.timefunctions: this name is kept for one release, and
warns where it is imported."""

from ..moved import reexport_moved

reexport_moved(__name__, globals())

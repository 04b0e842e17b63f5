"""flexmbs: deformable multibody dynamics in joint coordinates (Huang's formulation)."""

__version__ = "0.1.0"

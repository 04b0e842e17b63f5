"""flexmbs: deformable multibody dynamics in joint coordinates (Huang's formulation)."""

__version__ = "0.1.0"

__all__ = ["user_law"]


def __getattr__(name):
    """`flexmbs.user_law`, the decorator of user force laws, imported on first use
    (it brings numba in; `import flexmbs` alone stays light)."""
    if name == "user_law":
        from .model.user_laws import user_law
        return user_law
    raise AttributeError(f"module 'flexmbs' has no attribute {name!r}")

"""How the integrators store and factor the iteration matrix of a model: dense, or in
its bordered band layout (flexmbs.model.band_layout, flexmbs.numerics.bordered_band)."""

__all__ = ["LINEAR_SOLVERS", "BANDED_MIN_UNKNOWNS", "banded_iteration_matrix"]

LINEAR_SOLVERS = ("auto", "dense", "banded")

BANDED_MIN_UNKNOWNS = 72
"""The size of the reduced iteration matrix (speeds, works) from which "auto" stores
it in its bordered band layout, when the layout has an interior. Measured with
`galpha` (rtol 1e-4, time per step, medians of 3 runs taken in turn,
docs/explanation/method.md): H2 with 10 elements (63 unknowns) is 9 % faster dense,
with 12 (75) within 10 % either way, with 16 (99) 1.5 times faster banded; the UR5 of
benchmarks/bench_scaling.py with 8 elements a link (151 unknowns, 48 of them interior)
1.2 times faster banded."""


def banded_iteration_matrix(dims, choice="auto"):
    """Whether a model whose bordered band layout has dims = [ni, nb, kd] stores its
    iteration matrix in that layout: never for "dense" or without interior unknowns;
    always else for "banded"; for "auto" from BANDED_MIN_UNKNOWNS unknowns on."""
    if choice not in LINEAR_SOLVERS:
        raise ValueError(f"linear_solver must be one of {', '.join(LINEAR_SOLVERS)}, "
                         f"got {choice!r}")
    ni, nb = int(dims[0]), int(dims[1])
    if choice == "dense" or ni == 0:
        return False
    return choice == "banded" or ni + nb >= BANDED_MIN_UNKNOWNS

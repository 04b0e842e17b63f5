"""The integrators (module texts: base, bdf, galpha, bdf_integrator, scipy_ivp, ida)."""

import warnings

# The BDF and generalized-alpha step loops take the model's residual and hooks as
# first-class functions, in a tuple held by reference (flexmbs.solvers.bdf); numba
# warns at each such tuple type that the feature is experimental (its
# NumbaExperimentalFeatureWarning), which would reach every user of a run.
warnings.filterwarnings("ignore", message="First-class function type feature is experimental")

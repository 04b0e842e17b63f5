"""The composite-rigid-body M* (dynamics.composite, the mass hook of rigid trees)
against B^T M B summed body by body (system.mass_matrix) and against Newton-Euler
with unit accelerations (tests/reference.py), on every rigid model file, rigid chains,
random trees of every joint type with prescribed coordinates, and a motor's rotor."""

import glob

import numpy as np
import pytest
from reference import random_tree_model

from flexmbs import compile_model, load_model
from flexmbs.dynamics import api
from flexmbs.dynamics.system import dae_mass_block, dae_residual
from flexmbs.model.library import chain_model
from flexmbs.model.timefunctions import Constant

# Both sides sum the same products of a few hundred terms at most in another order
# (the composite about the origin, B^T M B about each body's origin): rounding,
# ~n eps relative to the largest entry.
ROUNDING = 1e-13


def _with_motor():
    model = chain_model(3, "spatial")
    joint = sorted(model.joints)[1]
    model.add_actuator("motor", joint, type="torque", torque=Constant(0.5),
                       rotor_inertia=0.3, gear_ratio=7.0)
    return model


def _random_tree(seed, types, n_drivers):
    return random_tree_model(np.random.default_rng(seed), 2 * len(types), types,
                             n_drivers=n_drivers)


def _rigid(model):
    return all(type(body).__name__ == "RigidBody" for body in model.bodies.values())


RIGID_FILES = [path for path in sorted(glob.glob("data/models/*.toml"))
               if _rigid(load_model(path))]
MODELS = {path.split("/")[-1]: (lambda path=path: load_model(path)) for path in RIGID_FILES}
MODELS["chain_planar_8"] = lambda: chain_model(8, "planar")
MODELS["chain_spatial_8"] = lambda: chain_model(8, "spatial")
MODELS["chain_spatial_3 with a motor"] = _with_motor
MODELS["tree of 1-3 dof joints, 2 drivers"] = lambda: _random_tree(
    11, ("revolute", "prismatic", "cylindrical", "universal", "spherical"), 2)
MODELS["tree of 3-6 dof joints, 3 drivers"] = lambda: _random_tree(
    12, ("planar", "free", "fixed", "general", "spherical"), 3)


def _hook_and_dense(model, seed=5):
    """The mass hook's M* (on the spanning tree of a model with closed loops) and
    system.mass_matrix's (B^T M B) at a random state."""
    cm = compile_model(model)
    assert np.all(cm.arrays.body_flex < 0)
    nq, n = cm.nq, cm.nstate
    rng = np.random.default_rng(seed)
    y = cm.initial_state().copy()
    y[:nq] += 0.3 * rng.standard_normal(nq)
    y[nq:2 * nq] = rng.standard_normal(nq)
    hook = np.zeros((n - nq, n - nq))
    dae_mass_block(0.4, y, rng.standard_normal(n), (cm.arrays, cm.new_workspace()), hook)
    return hook[:nq, :nq], api.mass_matrix(cm, y[:nq], 0.4)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_composite_mass_matrix_is_b_transpose_m_b(name):
    composite, dense = _hook_and_dense(MODELS[name]())
    assert np.abs(composite - dense).max() <= ROUNDING * np.abs(dense).max()
    assert np.array_equal(composite, composite.T)


def test_every_rigid_model_file_is_compared():
    """Chains, four-bar, Bricard, the rolling disks: a file lost from the comparison
    above fails here."""
    assert len(RIGID_FILES) >= 7, RIGID_FILES


@pytest.mark.parametrize("name", ["chain_spatial_8", "tree of 1-3 dof joints, 2 drivers"])
def test_mass_hook_after_the_residual_reuses_its_kinematics(name):
    """Called right after the residual at the same (t, y), as the BDF driver calls it,
    the hook takes the forward kinematics from the workspace (terms_current) and gives
    the same M*, bit for bit, as from a fresh workspace; a pose spoiled in between
    shows up in M*, so the kinematics were not computed again. After the residual at
    another time, coordinate or speed (the tree has drivers: t moves them), or right
    after M* (which shifts the terms), it computes them again."""
    cm = compile_model(MODELS[name]())
    nq, n = cm.nq, cm.nstate
    rng = np.random.default_rng(3)
    y = cm.initial_state().copy()
    y[:nq] += 0.3 * rng.standard_normal(nq)
    y[nq:2 * nq] = rng.standard_normal(nq)
    yp = rng.standard_normal(n)
    t = 0.4
    fresh = np.zeros((n - nq, n - nq))
    dae_mass_block(t, y, yp, (cm.arrays, cm.new_workspace()), fresh)

    ws = cm.new_workspace()
    args = (cm.arrays, ws)
    out = np.zeros(n)
    hook = np.zeros_like(fresh)
    dae_residual(t, y, yp, args, out)
    assert ws.kin_key[0] == 1.0
    dae_mass_block(t, y, yp, args, hook)
    assert np.array_equal(hook, fresh)
    assert ws.kin_key[0] == 0.0
    dae_mass_block(t, y, yp, args, hook)
    assert np.array_equal(hook, fresh)

    dae_residual(t, y, yp, args, out)
    ws.rot[-1] = -ws.rot[-1]
    dae_mass_block(t, y, yp, args, hook)
    assert not np.array_equal(hook, fresh)

    for k, dt in ((None, 0.1), (0, 0.0), (nq + nq - 1, 0.0)):
        other = y.copy()
        if k is not None:
            other[k] += 1e-3
        dae_residual(t + dt, other, yp, args, out)
        dae_mass_block(t, y, yp, args, hook)
        assert np.array_equal(hook, fresh), (k, dt)

"""Path matrices of a branched tree worked out by hand (Huang 2.1, 2.2;
docs/explanation/formulation.md
section 4), and the numbering of a model declared in an arbitrary order."""

import numpy as np

from flexmbs.model import Model
from flexmbs.model.topology import body_path_matrix, build_topology, joint_path_matrix

#        ground
#          |
#          a            bodies numbered root to leaves, breadth first:
#         / \           a=0, b=1, c=2, d=3, f=4, e=5
#        b   c
#       /     \
#      d       f
#      |
#      e
PARENT = np.array([-1, 0, 0, 1, 2, 3])

# T[i, j] = 1 when body j is body i or on its path to the ground
T_BY_HAND = np.array([
    [1, 0, 0, 0, 0, 0],   # a
    [1, 1, 0, 0, 0, 0],   # b
    [1, 0, 1, 0, 0, 0],   # c
    [1, 1, 0, 1, 0, 0],   # d
    [1, 0, 1, 0, 1, 0],   # f
    [1, 1, 0, 1, 0, 1],   # e
])

# chi over the markers of joints 0..5, each as (parent marker, child marker):
# -1 at the parent (lower-numbered body), +1 at the child, for the joints on the path
CHI_BY_HAND = np.array([
    # j0     j1     j2     j3     j4     j5
    [-1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],    # a
    [-1, 1, -1, 1, 0, 0, 0, 0, 0, 0, 0, 0],   # b
    [-1, 1, 0, 0, -1, 1, 0, 0, 0, 0, 0, 0],   # c
    [-1, 1, -1, 1, 0, 0, -1, 1, 0, 0, 0, 0],  # d
    [-1, 1, 0, 0, -1, 1, 0, 0, -1, 1, 0, 0],  # f
    [-1, 1, -1, 1, 0, 0, -1, 1, 0, 0, -1, 1],  # e
])


def test_path_matrices_of_a_branched_tree():
    np.testing.assert_array_equal(body_path_matrix(PARENT), T_BY_HAND)
    np.testing.assert_array_equal(joint_path_matrix(PARENT), CHI_BY_HAND)


def test_chi_sums_to_the_relative_position_chain():
    """Row i of chi, applied to marker positions, gives body i's joint-point chain:
    the sum over the joints on its path of (child marker - parent marker)."""
    rng = np.random.default_rng(1)
    markers = rng.normal(size=(12, 3))
    chi = joint_path_matrix(PARENT)
    for i in range(6):
        chain = np.zeros(3)
        j = i
        while j >= 0:
            chain += markers[2 * j + 1] - markers[2 * j]
            j = PARENT[j]
        np.testing.assert_allclose(chi[i] @ markers, chain, atol=1e-14)


def test_model_declared_out_of_order_is_numbered_root_to_leaves():
    m = Model("tree")
    for name in "edfcba":  # leaves first
        m.add_rigid_body(name, mass=1.0, inertia=(1, 1, 1), inertia_about="com")
    for child, parent in [("e", "d"), ("d", "b"), ("f", "c"), ("c", "a"), ("b", "a"),
                          ("a", "ground")]:
        m.add_joint(f"j_{child}", "revolute", parent=parent, child=child,
                    axis=(0, 0, 1))
    topo = build_topology(m)
    # breadth first; siblings in the order their joints were declared
    assert topo.body_names == ("a", "c", "b", "f", "d", "e")
    index = {name: k for k, name in enumerate(topo.body_names)}
    for k, name in enumerate(topo.body_names):
        assert topo.parent[k] < k  # parents before children
        assert topo.joint_names[k] == f"j_{name}"
    t = topo.body_path
    for name, ancestors in {"e": "abde", "f": "acf", "a": "a"}.items():
        row = {topo.body_names[j] for j in np.flatnonzero(t[index[name]])}
        assert row == set(ancestors)
    assert topo.marker_names[2 * index["e"] + 1].endswith("@e")
    assert topo.marker_names[2 * index["e"]].endswith("@d")

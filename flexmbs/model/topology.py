"""Topology of a tree: spanning tree, numbering root to leaves, path matrices.

FORMULATION.md section 4 (Huang 2.1, 2.2). Bodies are numbered 1..N from the ground
(body 0) towards the leaves, breadth first, so that every parent has a lower number than
its children; joint k is the joint whose child is body k. The joint markers are numbered
in the same order: joint k has marker 2k-1 on its parent (the lower-numbered body) and
marker 2k on its child (the higher-numbered body).
"""

from dataclasses import dataclass

import numpy as np

from ..errors import ModelError
from .description import GROUND

__all__ = ["Topology", "build_topology", "body_path_matrix", "joint_path_matrix"]


@dataclass(frozen=True)
class Topology:
    """The tree of a model.

    body_names  : (N,) moving bodies, root to leaves (body k+1 of the thesis is index k)
    joint_names : (N,) joint_names[k] connects body k to its parent
    parent      : (N,) index of the parent body, -1 for the ground
    marker_names: (2N,) "JOINT:MARKER@BODY" of each joint's parent then child marker,
                  in path-matrix column order
    body_path   : (N, N) T[i, j] = 1 if body j is on the path from the ground to body i
    joint_path  : (N, 2N) chi[i, k] = +1 / -1 / 0 (H2.2)
    """
    body_names: tuple
    joint_names: tuple
    parent: np.ndarray
    marker_names: tuple
    body_path: np.ndarray
    joint_path: np.ndarray


def body_path_matrix(parent):
    """T[i, j] = 1 if body j is body i or one of its ancestors (H2.1)."""
    n = len(parent)
    t = np.zeros((n, n), dtype=np.int8)
    for i in range(n):
        j = i
        while j >= 0:
            t[i, j] = 1
            j = parent[j]
    return t


def joint_path_matrix(parent):
    """chi[i, k] over the 2N joint markers (H2.2).

    Joint j (child body j) has marker 2j on its parent (column 2j, zero-based, Huang's
    2j+1) and marker 2j+1 on its child. For every joint on the path to body i, its child
    marker (on the higher-numbered body) gets +1 and its parent marker -1.
    """
    n = len(parent)
    chi = np.zeros((n, 2 * n), dtype=np.int8)
    t = body_path_matrix(parent)
    for i in range(n):
        for j in range(n):
            if t[i, j]:
                chi[i, 2 * j] = -1
                chi[i, 2 * j + 1] = +1
    return chi


def build_topology(model):
    """Check that the joints form a tree rooted at the ground and number it.

    Raises ModelError for cut joints (closed loops are not supported in this version),
    loops without a cut joint, a body with two parents, and bodies not connected to
    the ground.
    """
    if not model.bodies:
        raise ModelError("the model has no bodies: expected at least one [bodies.NAME]",
                         "model", None)
    joints = list(model.joints.values())
    for j in joints:
        if j.cut:
            raise ModelError(
                "closed loops (cut joints) are not supported in this version of flexmbs; "
                "only trees can be simulated", f'joint "{j.name}"', "cut")

    # a loop: a joint that connects two bodies already connected (union-find)
    root = {b: b for b in [GROUND, *model.bodies]}

    def find(b):
        while root[b] != b:
            root[b] = root[root[b]]
            b = root[b]
        return b

    for j in joints:
        a, b = find(j.parent), find(j.child)
        if a == b:
            raise ModelError(
                f'closes a loop between bodies "{j.parent}" and "{j.child}" and no joint of '
                "the loop is marked cut = true (closed loops are not supported in this "
                "version; only trees can be simulated)", f'joint "{j.name}"', "child")
        root[a] = b

    parent_joint = {}
    for j in joints:
        if j.child in parent_joint:
            other = parent_joint[j.child]
            raise ModelError(
                f'body "{j.child}" has two parents: joint "{other.name}" (from '
                f'"{other.parent}") and joint "{j.name}" (from "{j.parent}"); in a tree '
                "each body has one parent: swap parent and child of one of these joints",
                f'joint "{j.name}"', "child")
        parent_joint[j.child] = j

    children = {}
    for j in joints:
        children.setdefault(j.parent, []).append(j)
    order, queue = [], [GROUND]
    while queue:
        b = queue.pop(0)
        for j in children.get(b, []):
            order.append(j)
            queue.append(j.child)
    reached = {j.child for j in order}
    missing = [b for b in model.bodies if b not in reached]
    if missing:
        raise ModelError(
            "not connected to the ground by joints (every body needs a path of joints "
            "to the ground; use a free joint for a floating base)",
            f'body "{missing[0]}"', None)

    body_names = tuple(j.child for j in order)
    index = {b: k for k, b in enumerate(body_names)}
    parent = np.array([index.get(j.parent, -1) for j in order], dtype=np.int64)
    markers = []
    for j in order:
        markers += [f"{j.name}:{j.parent_marker}@{j.parent}",
                    f"{j.name}:{j.child_marker}@{j.child}"]
    return Topology(body_names=body_names, joint_names=tuple(j.name for j in order),
                    parent=parent, marker_names=tuple(markers),
                    body_path=body_path_matrix(parent), joint_path=joint_path_matrix(parent))

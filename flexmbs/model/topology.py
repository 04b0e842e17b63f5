"""Topology of a tree: spanning tree, numbering root to leaves, path matrices.

docs/explanation/formulation.md section 4 (Huang 2.1, 2.2). Bodies are numbered 1..N from
the ground (body 0) towards the leaves, breadth first, so that every parent has a lower
number than its children; joint k is the joint whose child is body k. The joint markers are
numbered in the same order: joint k has marker 2k-1 on its parent (the lower-numbered body)
and marker 2k on its child (the higher-numbered body).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelError
from .description import GROUND

if TYPE_CHECKING:
    from .description import Model
    from .items import Joint

__all__ = [
    "Topology",
    "build_topology",
    "body_path_matrix",
    "joint_path_matrix",
    "choose_cut_joints",
    "constraint_count",
]


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
    cut_joint_names: the joints that close loops (their constraints hold them closed,
                  docs/explanation/formulation.md section 5); cut_reasons: "marked" (cut =
                  true in the model) or "chosen" (by `choose_cut_joints`), one per cut joint
    """

    body_names: tuple
    joint_names: tuple
    parent: np.ndarray
    marker_names: tuple
    body_path: np.ndarray
    joint_path: np.ndarray
    cut_joint_names: tuple = ()
    cut_reasons: tuple = ()


def body_path_matrix(parent: NDArray[np.int64]) -> NDArray[np.int8]:
    """T[i, j] = 1 if body j is body i or one of its ancestors (H2.1)."""
    n = len(parent)
    t = np.zeros((n, n), dtype=np.int8)
    for i in range(n):
        j = i
        while j >= 0:
            t[i, j] = 1
            j = parent[j]
    return t


def joint_path_matrix(parent: NDArray[np.int64]) -> NDArray[np.int8]:
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


def constraint_count(joint: Joint) -> int:
    """Equations a joint imposes when it is cut: 6 minus its degrees of freedom."""
    return 6 - joint.ndof


def choose_cut_joints(model: Model) -> tuple[list[Joint], list[Joint], dict[str, str]]:
    """(tree joints, cut joints, {cut joint: "marked" or "chosen"}).

    Joints marked `cut` are cut. Of the others, every body keeps one joint of which it
    is the child: the one with the fewest constraint equations (the most degrees of
    freedom; the first in the file among equals); its other joints close loops and are
    cut, so that the cut joints carry many equations (after Kim and Vanderploeg: the
    loop-closing joints with the most equations leave the fewest coordinates and
    multipliers to the others).
    """
    joints = list(model.joints.values())
    why = {j.name: "marked" for j in joints if j.cut}
    incoming: dict[str, list[tuple[int, int, Joint]]] = {}
    for k, j in enumerate(joints):
        if not j.cut:
            incoming.setdefault(j.child, []).append((constraint_count(j), k, j))
    tree = []
    for _body, options in incoming.items():
        options.sort(key=lambda x: (x[0], x[1]))
        tree.append(options[0][2])
        for _, _, j in options[1:]:
            why[j.name] = "chosen"
    tree.sort(key=lambda j: joints.index(j))
    cut = [j for j in joints if j.name in why]
    return tree, cut, why


def build_topology(model: Model) -> Topology:
    """Choose the cut joints of closed loops (`choose_cut_joints`), check that the
    other joints form a tree rooted at the ground and number it.

    Raises ModelError for bodies not connected to the ground and for cut joints whose
    two bodies are not both in the tree.
    """
    if not model.bodies:
        raise ModelError(
            "the model has no bodies: expected at least one [bodies.NAME]", "model", None
        )
    tree_joints, cut_joints, why = choose_cut_joints(model)
    joints = tree_joints
    children: dict[str, list[Joint]] = {}
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
            f'body "{missing[0]}"',
            None,
        )

    body_names = tuple(j.child for j in order)
    index = {b: k for k, b in enumerate(body_names)}
    parent = np.array([index.get(j.parent, -1) for j in order], dtype=np.int64)
    markers = []
    for j in order:
        markers += [
            f"{j.name}:{j.parent_marker}@{j.parent}",
            f"{j.name}:{j.child_marker}@{j.child}",
        ]
    return Topology(
        body_names=body_names,
        joint_names=tuple(j.name for j in order),
        parent=parent,
        marker_names=tuple(markers),
        body_path=body_path_matrix(parent),
        joint_path=joint_path_matrix(parent),
        cut_joint_names=tuple(j.name for j in cut_joints),
        cut_reasons=tuple(why[j.name] for j in cut_joints),
    )

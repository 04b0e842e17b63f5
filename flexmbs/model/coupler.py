"""Couplers: one joint coordinate tied to another, as the two sides of a gear or a
belt, or a gripper's mimicking finger.

A coupler makes the coordinate x_f (`coordinate` of `joint`, the follower) follow the
coordinate x_l (`leader_coordinate` of `leader`):

    phi = x_f - k x_l - o = 0        (k `multiplier`; o `offset`, rad or m)

a constraint row of its own (flexmbs.model.constraint_tables, kind COUPLER), enforced
with its multiplier as the cut joints' rows are: its Jacobian e_f - k e_l is constant,
its velocity row x_f' - k x_l' and its bias gamma are zero. The multiplier lambda is
the generalized force the coupling exerts, -lambda on x_f and +k lambda on x_l (N m
or N): a pair of torques (forces) that does no work along the motion, so the energy
balance closes without a term of its own. A driven leader makes the follower a
driven coordinate too (its driver bears the coupler's force); the follower must be a
free coordinate of a tree joint.

At the start the follower's value and rate are the leader's times k (plus o): the
joint's own `initial` and `initial_rate` for that coordinate are not used (a note
says so where they differ).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ModelError
from .field_checks import _check_joint_coordinate, _check_not_prescribed, _scalar

__all__ = ["Coupler", "coupler_item", "coupler_columns", "coupled_start"]


@dataclass
class Coupler:
    """x_f = `multiplier` x_l + `offset` (module docstring): x_f the coordinate
    `coordinate` of `joint`, x_l the coordinate `leader_coordinate` of `leader`."""

    name: str
    joint: str
    leader: str
    coordinate: int = 0
    leader_coordinate: int = 0
    multiplier: float = 1.0
    offset: float = 0.0

    @property
    def follower_key(self) -> tuple[str, int]:
        return (self.joint, self.coordinate)

    @property
    def leader_key(self) -> tuple[str, int]:
        return (self.leader, self.leader_coordinate)


def coupler_item(
    model: Any,
    name: str,
    joint: str,
    leader: str,
    coordinate: int = 0,
    leader_coordinate: int = 0,
    multiplier: float = 1.0,
    offset: float = 0.0,
) -> Coupler:
    """A checked Coupler for `model` (Model.add_coupler's arguments): both coordinates
    exist, the follower is not driven, follows no other coupler and is not the
    leader, and the chain of leaders does not come back to it."""
    item = f'coupler "{name}"'
    _check_joint_coordinate(model.joints, joint, coordinate, item)
    _check_joint_coordinate(
        model.joints, leader, leader_coordinate, item, ("leader", "leader_coordinate")
    )
    _check_not_prescribed(model.drivers.values(), joint, coordinate, item, "a coupler's follower")
    k = _scalar(multiplier, item, "multiplier")
    if k == 0.0:
        raise ModelError(
            "expected a multiplier other than 0 (a coordinate held at a constant is a "
            "driver's: law = constant)",
            item,
            "multiplier",
        )
    new = Coupler(
        name,
        joint,
        leader,
        int(coordinate),
        int(leader_coordinate),
        k,
        _scalar(offset, item, "offset"),
    )
    if new.leader_key == new.follower_key:
        raise ModelError("a coordinate cannot follow itself", item, "leader")
    leaders = {c.follower_key: c for c in model.couplers.values()}
    if new.follower_key in leaders:
        raise ModelError(
            f'coordinate {coordinate} of joint "{joint}" already follows coupler '
            f'"{leaders[new.follower_key].name}" (a coordinate follows one leader)',
            item,
            "joint",
        )
    key = new.leader_key
    while key in leaders:
        key = leaders[key].leader_key
        if key == new.follower_key:
            raise ModelError(
                f'the leaders of joint "{leader}" come back to joint "{joint}": couplers '
                "in a circle fix their coordinates or contradict each other",
                item,
                "leader",
            )
    return new


def coupler_columns(
    couplers: Sequence[Coupler], column_of: Mapping[tuple[str, int], int], qindex: Sequence[int]
) -> list[tuple[int, int]]:
    """(follower column, leader column) of each coupler among the joint coordinates;
    ModelError where a joint is cut (it has no coordinates) or the follower is not a
    free coordinate."""
    out = []
    for c in couplers:
        item = f'coupler "{c.name}"'
        for fld, key in (("joint", c.follower_key), ("leader", c.leader_key)):
            if key not in column_of:
                raise ModelError(
                    f'joint "{key[0]}" is cut (it closes a loop and has no coordinates): '
                    "couple a joint of the tree, or cut another joint of the loop",
                    item,
                    fld,
                )
        follower = column_of[c.follower_key]
        if qindex[follower] < 0:
            raise ModelError(
                f'coordinate {c.coordinate} of joint "{c.joint}" is prescribed: a coupler\'s '
                "follower is a free coordinate",
                item,
                "joint",
            )
        out.append((follower, column_of[c.leader_key]))
    return out


def coupled_start(
    couplers: Sequence[Coupler],
    columns: Sequence[tuple[int, int]],
    qindex: Sequence[int],
    q0: list[float],
    u0: list[float],
) -> list[str]:
    """Set each free follower's start in q0, u0 (lists by q index) from its free
    leader's, x_f = k x_l + o and x_f' = k x_l', the leaders first (a leader that
    follows in turn); a driven leader's follower is made consistent with the
    constraints (flexmbs.dynamics.constrained). Returns the notes on the given starts
    that this changed."""
    notes = []
    order = {f: k for k, (f, _) in enumerate(columns)}
    done: set[int] = set()

    def settle(k: int) -> None:
        if k in done:
            return
        done.add(k)
        follower, leader = columns[k]
        if leader in order:
            settle(order[leader])
        qf, ql = qindex[follower], qindex[leader]
        if ql < 0:
            return
        c = couplers[k]
        value = c.multiplier * q0[ql] + c.offset
        rate = c.multiplier * u0[ql]
        if abs(q0[qf] - value) > 1e-12 * (1.0 + abs(value)) and q0[qf] != 0.0:
            notes.append(
                f'coupler "{c.name}": joint "{c.joint}" starts at {value:.6g} from its '
                f'leader "{c.leader}", not at its own initial value {q0[qf]:.6g}'
            )
        q0[qf], u0[qf] = value, rate

    for k in range(len(columns)):
        settle(k)
    return notes

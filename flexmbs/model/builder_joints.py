"""The Model builder's methods that add joints and loads (flexmbs.model.description):
joints, drivers, couplers, point forces and torques, springs, user force laws and
rolling contacts."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ModelError
from .builder_base import DescriptionBase
from .drives import joint_limits
from .field_checks import _axis, _joint_axes, _per_coordinate, _scalar, _vector
from .items import Contact, Driver, Force, Joint, Spring
from .timefunctions import Constant, check_time_function
from .vocabulary import CONTACT_TYPES, FORCE_TYPES, GROUND, JOINT_TYPES, ORIGIN

if TYPE_CHECKING:
    from .coupler import Coupler
    from .timefunctions import TimeFunction
    from .user_laws import LawFunction, UserLaw, UserLawItem

__all__ = ["JointItems"]


class JointItems(DescriptionBase):
    """Model.add_joint, add_driver, add_coupler, add_force, add_spring, add_user_law
    and add_contact."""

    def add_joint(
        self,
        name: str,
        type: str,
        parent: str,
        child: str,
        parent_marker: str = ORIGIN,
        child_marker: str = ORIGIN,
        axis: ArrayLike | None = None,
        axes: Iterable[ArrayLike] | None = None,
        translation_axes: Iterable[ArrayLike] | None = None,
        rotation_axes: Iterable[ArrayLike] | None = None,
        initial: ArrayLike = 0.0,
        initial_rate: ArrayLike = 0.0,
        stiffness: ArrayLike = 0.0,
        damping: ArrayLike = 0.0,
        rest: ArrayLike = 0.0,
        cut: bool = False,
        limits: ArrayLike | None = None,
        limit_stiffness: ArrayLike | None = None,
        limit_damping: ArrayLike | None = None,
    ) -> Joint:
        """Add a joint from `parent_marker` on `parent` to `child_marker` on `child`.

        Types and their axes (unit vectors in the parent marker's frame):
        revolute/prismatic/cylindrical `axis` (default z); universal `axes` (2, default
        x then y); spherical `axes` (3 sequential rotations, default x, y, z); planar
        `axis` = its normal (translations in the plane, then the rotation about it);
        free (translations x, y, z, then rotations x, y, z); fixed; general
        `translation_axes` and `rotation_axes`.
        Per coordinate (scalar or list): `initial`, `initial_rate`, spring `stiffness`
        (N m/rad or N/m) about `rest`, viscous `damping` (N m s/rad or N s/m).
        `limits`: [lower, upper] (or a pair per coordinate; -inf, inf for no limit on
        a side), enforced by compliant stops of `limit_stiffness` and `limit_damping`
        per coordinate (flexmbs.dynamics.stops).
        """
        item = f'joint "{name}"'
        self._new_name(name, self.joints, item, self.bodies, "body")
        if type not in JOINT_TYPES:
            raise ModelError(
                f"expected a joint type, one of {', '.join(JOINT_TYPES)}; got {type!r}",
                item,
                "type",
            )
        for fld, b in (("parent", parent), ("child", child)):
            self._check_body(b, item, fld)
        if parent == child:
            raise ModelError("a joint connects two different bodies", item, "child")
        if child == GROUND:
            raise ModelError(
                'the ground cannot be a child; swap "parent" and "child"', item, "child"
            )
        self._check_marker(parent, parent_marker, item, "parent_marker")
        self._check_marker(child, child_marker, item, "child_marker")
        tr, ro = _joint_axes(type, item, axis, axes, translation_axes, rotation_axes)
        n = len(tr) + len(ro)
        if not isinstance(cut, bool):
            raise ModelError(f"expected true or false, got {cut!r}", item, "cut")
        joint = Joint(
            name,
            type,
            parent,
            child,
            parent_marker,
            child_marker,
            tr,
            ro,
            initial=_per_coordinate(initial, n, item, "initial"),
            initial_rate=_per_coordinate(initial_rate, n, item, "initial_rate"),
            stiffness=_per_coordinate(stiffness, n, item, "stiffness"),
            damping=_per_coordinate(damping, n, item, "damping"),
            rest=_per_coordinate(rest, n, item, "rest"),
            cut=cut,
        )
        for fld in ("stiffness", "damping"):
            if np.any(getattr(joint, fld) < 0):
                raise ModelError("expected values >= 0", item, fld)
        joint.limits, joint.limit_stiffness, joint.limit_damping = joint_limits(
            limits, limit_stiffness, limit_damping, n, joint.initial, cut, item
        )
        self.joints[name] = joint
        return joint

    def add_driver(
        self, name: str, joint: str, function: TimeFunction, coordinate: int = 0
    ) -> Driver:
        """Prescribe coordinate `coordinate` of `joint` as `function(t)` (a time function
        law from `flexmbs.model.timefunctions`). The coordinate leaves q."""
        item = f'driver "{name}"'
        self._new_name(name, self.drivers, item)
        self._check_coordinate_free(joint, coordinate, item)
        check_time_function(function, item, "function")
        self.drivers[name] = Driver(name, joint, int(coordinate), function)
        return self.drivers[name]

    def add_coupler(
        self,
        name: str,
        joint: str,
        leader: str,
        coordinate: int = 0,
        leader_coordinate: int = 0,
        multiplier: float = 1.0,
        offset: float = 0.0,
    ) -> Coupler:
        """Tie coordinate `coordinate` of `joint` (the follower) to coordinate
        `leader_coordinate` of `leader`: x_f = multiplier x_l + offset (offset in rad
        or m), a constraint with its multiplier, as a cut joint's
        (flexmbs.model.coupler). The follower is a free coordinate of a tree joint
        and follows one leader; its start is the leader's times the multiplier plus
        the offset."""
        from .coupler import coupler_item

        item = f'coupler "{name}"'
        self._new_name(name, self.couplers, item)
        self.couplers[name] = coupler_item(
            self, name, joint, leader, coordinate, leader_coordinate, multiplier, offset
        )
        return self.couplers[name]

    def add_force(
        self,
        name: str,
        type: str,
        body: str,
        marker: str = ORIGIN,
        vector: ArrayLike = (0.0, 0.0, 0.0),
        frame: str = "global",
        function: TimeFunction | None = None,
    ) -> Force:
        """A point force ("force", N) or torque ("torque", N m) on a marker:
        vector * function(t), `frame` "global" or "marker" (follower)."""
        item = f'force "{name}"'
        self._new_name(name, self.forces, item)
        if type not in FORCE_TYPES:
            raise ModelError(f"expected 'force' or 'torque', got {type!r}", item, "type")
        if body not in self.bodies:
            raise ModelError(f'unknown body "{body}" (loads act on moving bodies)', item, "body")
        if marker not in self.bodies[body].markers:
            raise ModelError(f'unknown marker "{marker}" on body "{body}"', item, "marker")
        if frame not in ("global", "marker"):
            raise ModelError(f"expected 'global' or 'marker', got {frame!r}", item, "frame")
        fn = Constant(1.0) if function is None else function
        check_time_function(fn, item, "function")
        self.forces[name] = Force(
            name, type, body, marker, _vector(vector, 3, item, "vector"), frame, fn
        )
        return self.forces[name]

    def add_spring(
        self,
        name: str,
        body1: str,
        marker1: str,
        body2: str,
        marker2: str,
        stiffness: float,
        damping: float = 0.0,
        rest_length: float | None = None,
    ) -> Spring:
        """A point-to-point spring (N/m) and damper (N s/m) between marker1 on body1 and
        marker2 on body2 (either may be the ground); `rest_length` (m) defaults to their
        distance in the initial configuration."""
        item = f'spring "{name}"'
        self._new_name(name, self.springs, item)
        for fld, b, mk in (("body1", body1, marker1), ("body2", body2, marker2)):
            self._check_body(b, item, fld)
            self._check_marker(b, mk, item, "marker" + fld[-1])
        if body1 == body2:
            raise ModelError("a spring connects two different bodies", item, "body2")
        self.springs[name] = Spring(
            name,
            body1,
            marker1,
            body2,
            marker2,
            _scalar(stiffness, item, "stiffness", nonnegative=True),
            _scalar(damping, item, "damping", nonnegative=True),
            None
            if rest_length is None
            else _scalar(rest_length, item, "rest_length", nonnegative=True),
        )
        return self.springs[name]

    def add_user_law(
        self,
        name: str,
        law: UserLaw | LawFunction,
        joint: str | None = None,
        coordinate: int = 0,
        body: str | None = None,
        marker: str = ORIGIN,
        frame: str = "global",
        params: ArrayLike = (),
        read_coordinates: Sequence[str] = (),
    ) -> UserLawItem:
        """A user force law (flexmbs.model.user_laws): `law(t, q, u, params, out)`, a
        function made by `flexmbs.user_law` (a plain function is compiled here), on
        coordinate `coordinate` of `joint` (out[0]: N or N m) or at `marker` of
        `body` (out[0:3] a force, N, out[3:6] a torque, N m, in `frame` axes,
        "global" or "marker"). It is called with `params` followed by the q indices
        of the coordinates named in `read_coordinates`."""
        from .user_laws import user_law_item

        self._new_name(name, self.user_laws, f'user law "{name}"')
        self.user_laws[name] = user_law_item(
            self, name, law, joint, coordinate, body, marker, frame, params, read_coordinates
        )
        return self.user_laws[name]

    def add_contact(
        self,
        name: str,
        type: str,
        disk: str,
        plane: str,
        radius: float | None = None,
        axis: ArrayLike = (0.0, 1.0, 0.0),
        normal: ArrayLike = (0.0, 0.0, 1.0),
        disk_marker: str = ORIGIN,
        plane_marker: str = ORIGIN,
    ) -> Contact:
        """Add a rolling contact (see Contact): type "rolling_disk", the `disk` body
        (its marker `disk_marker` at the disk's centre, the axle `axis` in that
        marker's axes), the `plane` body (the ground or a body; its marker
        `plane_marker` a point of the plane, `normal` in that marker's axes) and the
        disk's `radius` (m, required); or type "knife_edge", the edge point
        `disk_marker` of body `disk` with the blade along `axis` (no radius)."""
        item = f'contact "{name}"'
        self._new_name(name, self.contacts, item)
        if type not in CONTACT_TYPES:
            raise ModelError(
                f"expected a contact type, one of {', '.join(CONTACT_TYPES)}; got {type!r}",
                item,
                "type",
            )
        if disk == GROUND:
            raise ModelError("the disk must be a moving body, not the ground", item, "disk")
        for fld, b in (("disk", disk), ("plane", plane)):
            self._check_body(b, item, fld)
        if disk == plane:
            raise ModelError("the disk and the plane must be two different bodies", item, "plane")
        self._check_marker(disk, disk_marker, item, "disk_marker")
        self._check_marker(plane, plane_marker, item, "plane_marker")
        if type == "knife_edge":
            if radius is not None:
                raise ModelError(
                    "a knife_edge contact takes no radius (its edge is the point of disk_marker)",
                    item,
                    "radius",
                )
            radius = 0.0
        elif radius is None:
            raise ModelError(f'a {type} contact needs a "radius" (m)', item, "radius")
        else:
            radius = _scalar(radius, item, "radius", positive=True)
        contact = Contact(
            name,
            type,
            disk,
            plane,
            radius=radius,
            axis=_axis(axis, item, "axis"),
            normal=_axis(normal, item, "normal"),
            disk_marker=disk_marker,
            plane_marker=plane_marker,
        )
        self.contacts[name] = contact
        return contact

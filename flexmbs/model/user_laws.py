"""User force laws: Python functions that numba compiles once and the kernels call
inside the step loop, with no Python per step.

    import flexmbs

    @flexmbs.user_law
    def joint_damper(t, q, u, params, out):
        out[0] = -params[0] * u[int(params[1])]

    model.add_user_law("damper", joint_damper, joint="j2", params=[0.5],
                       read_coordinates=["j2"])

Every law has the one signature `law(t, q, u, params, out) -> None`
(flexmbs.dynamics.user_laws.LAW_SIGNATURE): t (s), the model's coordinates q and
speeds u (float64 arrays of size nq, in the order of CompiledModel.coordinate_names;
read them, never write them), its params (a float64 array), and out, zero on entry:
a joint law writes out[0], the force (N) or torque (N m) on its joint coordinate; a
marker law writes out[0:3], a force (N), and out[3:6], a torque (N m), at its marker,
in global axes or in the marker's (`frame`). The body of the law is numba's
nopython subset (numpy scalars and arrays, loops, math, other @numba.njit
functions); it cannot raise exceptions into the run (an error inside it is printed by
numba and the call returns with `out` as it is), and it must not keep state between
calls (the integrator calls it at trial states and for its Jacobians). Its work is
part of W_nc, so that the energy balance of the run closes with the law in it.

`user_law` compiles the function for that signature with numba's `cfunc`
(flexmbs.dynamics.user_laws.compile_law), cached on disk next to the kernels when the
function lives in a file; the kernels hold the address of the compiled entry point as
data, so no kernel is compiled again for a model with laws.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..dynamics.user_laws import (
    GLOBAL_AXES,
    JOINT_LAW,
    MARKER_AXES,
    MARKER_LAW,
    compile_law,
    law_entry,
    register_law,
)
from ..errors import ModelError
from ..runtime.config import CACHE
from .field_checks import _check_joint_coordinate

__all__ = [
    "UserLaw",
    "UserLawItem",
    "user_law",
    "user_law_item",
    "user_law_entries",
    "with_user_laws",
    "LAW_PARAMETERS",
    "USER_LAW_FRAMES",
]

LAW_PARAMETERS = ("t", "q", "u", "params", "out")
USER_LAW_FRAMES = {"global": GLOBAL_AXES, "marker": MARKER_AXES}
_COMPILED: list = []  # every UserLaw of the process: their addresses stay valid
LawFunction = Callable[
    [float, NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]],
    None,
]
"""law(t, q, u, params, out) -> None (the module's docstring)."""


class _LawHost(Protocol):
    """What the law items read of a model (flexmbs.model.description.Model)."""

    @property
    def joints(self) -> Mapping[str, Any]: ...

    @property
    def bodies(self) -> Mapping[str, Any]: ...

    @property
    def user_laws(self) -> Mapping[str, UserLawItem]: ...


class UserLaw:
    """A force law compiled for the kernels (see the module's docstring); made by
    `user_law`. `address`: the compiled entry point; `py_func`: the Python function
    (calling the UserLaw calls it, for checks in Python); `name`: module.qualname."""

    def __init__(self, function: LawFunction, cache: bool = True) -> None:
        py_func = getattr(function, "py_func", function)  # a numba dispatcher's function
        if not callable(py_func):
            raise TypeError(
                f"a user law is a function of {', '.join(LAW_PARAMETERS)}; got {function!r}"
            )
        self.py_func: LawFunction = py_func
        self.name = (
            f"{getattr(py_func, '__module__', '?')}."
            f"{getattr(py_func, '__qualname__', repr(py_func))}"
        )
        try:
            params = inspect.signature(py_func).parameters
        except (TypeError, ValueError):
            params = None
        if params is not None and len(params) != len(LAW_PARAMETERS):
            raise TypeError(
                f'user law "{self.name}": expected a function of '
                f"({', '.join(LAW_PARAMETERS)}), got {len(params)} "
                f"parameters ({', '.join(params)})"
            )
        self.spec: str | None = None  # "module:function" of a law a model file names
        self._compiled = compile_law(py_func, self.name, cache and CACHE)
        self.address = int(self._compiled.address)
        register_law(self.address, py_func)
        _COMPILED.append(self)

    def __call__(
        self,
        t: float,
        q: NDArray[np.float64],
        u: NDArray[np.float64],
        params: NDArray[np.float64],
        out: NDArray[np.float64],
    ) -> None:
        return self.py_func(t, q, u, params, out)

    def __repr__(self) -> str:
        return f"UserLaw({self.name})"


@overload
def user_law(function: LawFunction, *, cache: bool = True) -> UserLaw: ...


@overload
def user_law(function: None = None, *, cache: bool = True) -> Callable[[LawFunction], UserLaw]: ...


def user_law(
    function: LawFunction | None = None, *, cache: bool = True
) -> UserLaw | Callable[[LawFunction], UserLaw]:
    """Decorator: compile `function(t, q, u, params, out)` as a user force law
    (a UserLaw), for `Model.add_user_law`. `cache`: keep the compiled law in the
    on-disk cache (when the function lives in a file).

        @flexmbs.user_law
        def spring(t, q, u, params, out):
            out[0] = -params[0] * q[int(params[1])]
    """
    if function is None:
        return lambda f: UserLaw(f, cache)
    return UserLaw(function, cache)


@dataclass
class UserLawItem:
    """A user force law in a model: `law` (a UserLaw, named `function`) acting on
    coordinate `coordinate` of `joint` (kind "joint") or at marker `marker` of `body`
    (kind "marker", its force and torque in `frame` axes, "global" or "marker"); it is
    called with `params` followed by the q indices of `read_coordinates` (names of
    coordinates, CompiledModel.coordinate_names)."""

    name: str
    kind: str
    function: str
    joint: str | None
    coordinate: int | None
    body: str | None
    marker: str | None
    frame: str | None
    params: np.ndarray
    read_coordinates: tuple
    law: UserLaw | None = field(default=None, metadata={"serialize": False})


def user_law_item(
    model: _LawHost,
    name: str,
    law: UserLaw | LawFunction,
    joint: str | None,
    coordinate: int | None,
    body: str | None,
    marker: str | None,
    frame: str | None,
    params: ArrayLike,
    read_coordinates: Sequence[str],
) -> UserLawItem:
    """A validated UserLawItem for `model` (Model.add_user_law's arguments)."""
    item = f'user law "{name}"'
    if not isinstance(law, UserLaw):
        if not callable(law):
            raise ModelError(
                f"expected a function of ({', '.join(LAW_PARAMETERS)}) or "
                f"one made by flexmbs.user_law, got {law!r}",
                item,
                "law",
            )
        try:
            law = UserLaw(law)
        except TypeError as exc:
            raise ModelError(str(exc), item, "law") from None
    if (joint is None) == (body is None):
        raise ModelError(
            "expected either a joint (a joint law: a force or torque on one "
            "of its coordinates) or a body and marker (a marker law)",
            item,
            "joint",
        )
    if joint is not None:
        _check_joint_coordinate(model.joints, joint, coordinate, item)
        assert coordinate is not None  # an index of the joint's coordinates, checked
        for other in model.user_laws.values():
            if other.kind == "joint" and (other.joint, other.coordinate) == (joint, coordinate):
                raise ModelError(
                    f'coordinate {coordinate} of joint "{joint}" already has '
                    f'user law "{other.name}" (a coordinate takes one: add '
                    "the forces in one law)",
                    item,
                    "coordinate",
                )
        kind, coordinate, marker, frame = "joint", int(coordinate), None, None
    else:
        assert body is not None  # one of joint and body is given, checked above
        if body not in model.bodies:
            raise ModelError(f'unknown body "{body}" (laws act on moving bodies)', item, "body")
        if marker not in model.bodies[body].markers:
            raise ModelError(f'unknown marker "{marker}" on body "{body}"', item, "marker")
        if frame not in USER_LAW_FRAMES:
            raise ModelError(f"expected 'global' or 'marker', got {frame!r}", item, "frame")
        kind, coordinate = "marker", None
    try:
        p = np.array(params, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ModelError(f"expected a list of numbers, got {params!r}", item, "params") from None
    if not np.all(np.isfinite(p)):
        raise ModelError(f"expected finite numbers, got {params!r}", item, "params")
    if isinstance(read_coordinates, str) or not all(isinstance(c, str) for c in read_coordinates):
        raise ModelError(
            f"expected a list of coordinate names, got {read_coordinates!r}",
            item,
            "read_coordinates",
        )
    return UserLawItem(
        name,
        kind,
        law.spec or law.name,
        joint,
        coordinate,
        body,
        marker,
        frame,
        p,
        tuple(read_coordinates),
        law,
    )


def user_law_entries(
    model: _LawHost,
    coord_of: Mapping[tuple[str, int], int],
    coord_qindex: Sequence[int],
    coordinate_names: Sequence[str],
    marker_id: Callable[[str, str], int],
) -> list[tuple[int, list[float]]]:
    """The model's laws as time-function entries [(kind, data)], joint laws first
    (flexmbs.dynamics.user_laws). coord_of: (joint, coordinate) -> column;
    coord_qindex: column -> q index (-1: prescribed); coordinate_names: the names of
    q; marker_id(body, marker) -> marker-table index."""
    where = {name: k for k, name in enumerate(coordinate_names)}
    entries = []
    for law in model.user_laws.values():
        item = f'user law "{law.name}"'
        # a joint law names its joint and coordinate, a marker law its body, marker and frame
        if law.kind == "joint":
            assert law.joint is not None and law.coordinate is not None
            target = coord_of[(law.joint, law.coordinate)]
            if coord_qindex[target] < 0:
                raise ModelError(
                    f'coordinate {law.coordinate} of joint "{law.joint}" is '
                    "prescribed by a driver: a law acts on a free coordinate",
                    item,
                    "coordinate",
                )
            kind, axes = JOINT_LAW, GLOBAL_AXES
        else:
            assert law.body is not None and law.marker is not None and law.frame is not None
            target = marker_id(law.body, law.marker)
            kind, axes = MARKER_LAW, USER_LAW_FRAMES[law.frame]
        indices = []
        for name in law.read_coordinates:
            if name not in where:
                known = ", ".join(coordinate_names[:8]) + (
                    ", ..." if len(coordinate_names) > 8 else ""
                )
                raise ModelError(
                    f'unknown coordinate "{name}"; the coordinates are {known}',
                    item,
                    "read_coordinates",
                )
            indices.append(where[name])
        assert law.law is not None  # user_law_item sets it
        entries.append((kind, law_entry(law.law.address, target, axes, list(law.params) + indices)))
    return [e for e in entries if e[0] == JOINT_LAW] + [e for e in entries if e[0] == MARKER_LAW]


def with_user_laws(
    kind: NDArray[np.int64],
    ptr: NDArray[np.int64],
    data: NDArray[np.float64],
    entries: Sequence[tuple[int, Sequence[float]]],
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
    """The time-function arrays (kind, ptr, data) with the law entries appended."""
    if not entries:
        return kind, ptr, data
    kind = np.concatenate([kind, np.array([k for k, _ in entries], dtype=np.int64)])
    sizes = np.cumsum([len(d) for _, d in entries])
    ptr = np.concatenate([ptr, ptr[-1] + sizes]).astype(np.int64)
    data = np.concatenate([data, np.array([v for _, d in entries for v in d])])
    return kind, ptr, data


def load_law(spec: str, base: str | None, item: str) -> UserLaw:
    """The user law a model file names in its `function` field: "module:function"
    (a module on the Python path) or "path/to/file.py:function" (a file, relative
    to the model file's folder `base`), compiled (`user_law`). ModelError naming
    `item` and the field when the module or file cannot be imported, the name is
    not in it, or the function does not have the signature of a law."""
    import importlib
    import importlib.util
    import os
    import sys

    where, colon, attr = spec.rpartition(":")
    if not colon or not where or not attr:
        raise ModelError(
            f'expected "module:function" or "file.py:function", got "{spec}"', item, "function"
        )
    if where.endswith(".py") or os.sep in where or "/" in where:
        path = os.path.abspath(os.path.join(base or os.getcwd(), where))
        if not os.path.isfile(path):
            raise ModelError(f'no file "{path}" (named by "{spec}")', item, "function")
        # a module of its own per file, entered in sys.modules so that numba caches it
        name = "flexmbs_user_law_" + "".join(c if c.isalnum() else "_" for c in path)
        module = sys.modules.get(name)
        if module is None or getattr(module, "__file__", None) != path:
            module_spec = importlib.util.spec_from_file_location(name, path)
            assert module_spec is not None and module_spec.loader is not None
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[name] = module
            try:
                module_spec.loader.exec_module(module)
            except Exception as exc:  # noqa: BLE001 - any error of the user's file
                del sys.modules[name]
                raise ModelError(
                    f'cannot import "{where}": {type(exc).__name__}: {exc}', item, "function"
                ) from None
    else:
        try:
            module = importlib.import_module(where)
        except Exception as exc:  # noqa: BLE001 - any error of the user's module
            raise ModelError(
                f'cannot import module "{where}": {type(exc).__name__}: {exc}', item, "function"
            ) from None
    function = getattr(module, attr, None)
    if function is None:
        raise ModelError(f'"{where}" has no function "{attr}"', item, "function")
    if isinstance(function, UserLaw):
        return function
    if not callable(function):
        raise ModelError(f'"{spec}" is not a function', item, "function")
    try:
        law = UserLaw(function)
    except TypeError as exc:
        raise ModelError(str(exc), item, "function") from None
    law.spec = spec
    return law

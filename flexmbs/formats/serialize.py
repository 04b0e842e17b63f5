"""The model as plain JSON-able data (written to the result file as its normalised form)."""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..model.description import Model

__all__ = ["model_to_dict", "model_to_json"]


def _plain(x: object) -> object:
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        d = {
            f.name: _plain(getattr(x, f.name))
            for f in dataclasses.fields(x)
            if f.metadata.get("serialize", True)
        }
        law = getattr(type(x), "law", None)
        if law is not None:
            d = {"law": law, **d}
        return d
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, (np.floating, float)):
        return float(x) if np.isfinite(x) else str(float(x))
    if isinstance(x, np.integer):
        return int(x)
    return x


def model_to_dict(model: Model) -> dict[str, object]:
    """Every item of the model after validation (inertia about the centre of mass);
    user laws, where there are any, by the name of their function."""
    d = {
        "name": model.name,
        "gravity": _plain(model.gravity),
        "ground_markers": _plain(model.ground_markers),
        "bodies": _plain(model.bodies),
        "joints": _plain(model.joints),
        "drivers": _plain(model.drivers),
        "actuators": _plain(model.actuators),
        "forces": _plain(model.forces),
        "springs": _plain(model.springs),
        "sensors": _plain(model.sensors),
        "solver": _plain(model.solver),
        "output": _plain(model.output),
    }
    if getattr(model, "contacts", None):
        d["contacts"] = _plain(model.contacts)
    if getattr(model, "user_laws", None):
        d["user_laws"] = _plain(model.user_laws)
    for kind in ("couplers", "frictions", "backlashes", "controllers"):
        if getattr(model, kind, None):
            d[kind] = _plain(getattr(model, kind))
    return d


def model_to_json(model: Model) -> str:
    return json.dumps(model_to_dict(model), indent=1)

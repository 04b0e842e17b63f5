"""The groups of a result file that do not grow while the run goes (the model, its
topology, the modes, the solver's settings: written once, when the file is laid out),
and the descriptions a result file keeps beside its energies and its modes (attr
`description`)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import h5py
import numpy as np

from .result_rows import json_default, set_strings_attr, utf8_strings

if TYPE_CHECKING:
    from ..model.topology import Topology

__all__ = [
    "ENERGY_DESCRIPTIONS",
    "MODE_DESCRIPTIONS",
    "write_model",
    "write_modes",
    "write_solver_settings",
    "write_topology",
]

ENERGY_DESCRIPTIONS = {
    "kinetic": "kinetic energy T = 1/2 sum v_i^T M_i v_i (J)",
    "gravity": "gravitational potential V_g = -sum g^T (m_i r_i + A_i St_i) (J); "
    "its zero is arbitrary, only its variation matters",
    "strain": "strain energy U of the flexible bodies (J), geometric parts included; 0 "
    "for rigid models",
    "strain_axial_force": "the part U3 = 1/2 EA u' int (v'^2 + w'^2) dx of strain due to "
    "the axial force (geometric stiffness, docs/explanation/"
    "formulation.md section 6) (J)",
    "strain_foreshortening": "the part U4 of strain due to foreshortening (geometric "
    "stiffness, docs/explanation/formulation.md section 6) (J)",
    "spring": "potential of the joint springs V_s = sum 1/2 k (x - x0)^2 (J)",
    "dissipated": "W_nc: work done ON the system by the non-conservative forces "
    "(dampers, structural damping, drivers/prescribed motion, applied "
    "loads) since t = 0 (J); negative when energy is dissipated",
    "total": "E = kinetic + gravity + strain + spring - dissipated (J); constant in "
    "exact arithmetic for every model, damped or driven (docs/explanation/"
    "formulation.md section 7)",
}
MODE_DESCRIPTIONS = {
    "basis": "Phi (n, nm): the free nodal coordinates (m, rad; names in "
    "nodal_coordinates) per unit modal coordinate, qf_nodal = Phi eta; "
    "M-orthonormal",
    "nodal_coordinates": "(n,) names BODY.nNODE.DOF of the rows of basis",
    "coordinates": "(nm,) names of the modal coordinates eta (columns of basis, and of q)",
    "kinds": '(nm,) "mode" (an eigenvector), "correction" (a static correction mode) or '
    '"derivative" (a modal derivative)',
    "frequencies": "(nm,) Hz: natural frequency of each mode of the body alone under "
    "its reference conditions; for a correction mode or a modal derivative the Rayleigh "
    "quotient sqrt(phi^T K phi) / 2 pi",
    "reduced_frequencies": "(nm,) Hz: natural frequencies of the reduced body, "
    "eig(Phi^T K Phi, Phi^T M Phi)",
    "descriptions": "(nm,) what each column is: its dominant strain energy "
    "(axial, torsion, bending y, bending z)",
    "strain_energy_fractions": "(nm, 4) strain energy of each column split as attr energy_parts",
    "sources": "(nm, 2) node and dof (0..5 = u v w tx ty tz) of a correction mode; -1 for a mode",
}


def write_model(file: h5py.File, model_text: str, model_json: str) -> None:
    """/model: the model file's text and the normalised model (JSON)."""
    g = file.create_group("model")
    g.create_dataset("text", data=str(model_text), dtype=h5py.string_dtype())
    g.create_dataset("json", data=str(model_json), dtype=h5py.string_dtype())
    g["text"].attrs["description"] = "the model file as given (empty for a model built in Python)"
    g["json"].attrs["description"] = "the normalised model (JSON)"


def write_topology(file: h5py.File, topology: Topology, coordinate_names: Sequence[str]) -> None:
    """/topology: the bodies, joints and markers of the tree, its paths, the
    coordinates' names."""
    g = file.create_group("topology")
    s = h5py.string_dtype()
    g.create_dataset("body_names", data=utf8_strings(topology.body_names), dtype=s)
    g.create_dataset("joint_names", data=utf8_strings(topology.joint_names), dtype=s)
    g.create_dataset("parent", data=np.asarray(topology.parent, dtype=np.int64))
    g.create_dataset("marker_names", data=utf8_strings(topology.marker_names), dtype=s)
    g.create_dataset("body_path", data=np.asarray(topology.body_path, dtype=np.int8))
    g.create_dataset("joint_path", data=np.asarray(topology.joint_path, dtype=np.int8))
    g.create_dataset("coordinate_names", data=utf8_strings(coordinate_names), dtype=s)
    g["parent"].attrs["description"] = "parent body index of each body, -1 = ground"
    g["body_path"].attrs["description"] = (
        "T[i, j] = 1 if body j is on the path from the ground to body i (H2.1)"
    )
    g["joint_path"].attrs["description"] = "chi[i, k] over the 2N joint markers (H2.2)"


def write_modes(file: h5py.File, modes: Mapping[str, Mapping[str, Mapping[str, object]]]) -> None:
    """/modes/<body>: datasets (arrays, or lists of str) and attrs of each
    reduced beam body."""
    g = file.create_group("modes")
    g.attrs["description"] = (
        "mode bases of the beam bodies with modal reduction, "
        "qf = basis @ eta (docs/explanation/formulation.md section 8)"
    )
    for body, record in modes.items():
        b = g.create_group(str(body))
        for name, value in record.get("datasets", {}).items():
            if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
                b.create_dataset(name, data=utf8_strings(value), dtype=h5py.string_dtype())
            else:
                b.create_dataset(name, data=np.asarray(value))
        for name, value in record.get("attrs", {}).items():
            if isinstance(value, (list, tuple)):
                set_strings_attr(b, name, [str(v) for v in value])
            else:
                b.attrs[name] = value
        for name, text in MODE_DESCRIPTIONS.items():
            if name in b:
                b[name].attrs["description"] = text


def write_solver_settings(
    file: h5py.File, solver_name: str, settings: Mapping[str, float | str]
) -> None:
    """/solver: the method, its tolerances and the run's settings (JSON); the
    statistics are added at the end of the run."""
    g = file.create_group("solver")
    g.attrs["method"] = str(solver_name)
    g.attrs["rtol"] = float(settings.get("rtol", math.nan))
    g.attrs["atol"] = float(settings.get("atol", math.nan))
    g.attrs["settings"] = json.dumps(dict(settings), default=json_default)

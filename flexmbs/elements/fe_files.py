"""Reading and writing the files that hold a finite-element body
(flexmbs.elements.fe_body), gathered here from a module per format: Matrix Market and
Harwell-Boeing matrices with a node table (CSV), Abaqus matrix output (.mtx) with its
input file's nodes and node sets (.inp) (fe_matrix_files, fe_abaqus), gmsh meshes
(.msh, through meshio) to be assembled here with a material (fe_mesh_files), and
MBDyn's modal files (.fem), read and written (fe_mbdyn).

Units (fe_units): the files are read in the unit system they were written in, `units` =
"LENGTH-MASS-TIME" (e.g. "m-kg-s", the default, or "mm-t-s", the usual system of
finite-element models in millimetres: N, MPa, t/mm^3), and converted to SI: with
L, m, t the units in m, kg and s, a stiffness entry is multiplied by
(m / t^2) L^r, a mass entry by m L^r, r the number of its two coordinates that are
rotations (1 each), and the coordinates by L. A mesh takes its `length_unit` alone
(its material is in SI).
"""


from __future__ import annotations

from typing import Any

from .fe_abaqus import read_abaqus_inp
from .fe_matrix_files import fe_data_from_matrices, read_matrix, read_node_table
from .fe_mbdyn import read_mbdyn_fem, write_mbdyn_fem
from .fe_mesh_files import fe_data_from_mesh, read_mesh
from .fe_units import (
    LARGEST_BODY,
    LENGTH_UNITS,
    MASS_PER_SIZE_RANGE,
    MASS_UNITS,
    TIME_UNITS,
    WAVE_SPEED_RANGE,
    check_matrix_units,
    check_plausible_units,
    unit_scales,
)

__all__ = [
    "LENGTH_UNITS",
    "MASS_UNITS",
    "TIME_UNITS",
    "unit_scales",
    "read_matrix",
    "read_node_table",
    "read_abaqus_inp",
    "read_mesh",
    "fe_data_from_matrices",
    "fe_data_from_mesh",
    "read_mbdyn_fem",
    "write_mbdyn_fem",
    "check_plausible_units",
    "check_matrix_units",
    "WAVE_SPEED_RANGE",
    "MASS_PER_SIZE_RANGE",
    "LARGEST_BODY",
]


def described_files(table: dict[str, Any]) -> list[str]:
    """The data files a body's table names (for the model's derivation key)."""
    return [
        str(table[k])
        for k in ("mesh", "stiffness", "mass", "nodes", "modal", "dof_map")
        if k in table
    ]

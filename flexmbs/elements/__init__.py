"""Beam elements and flexible bodies: sections, materials, the 3-D beam element (shape
matrix, frame, stiffness) and the inertia invariants of docs/explanation/formulation.md
sections 2-3."""

from .beam import (
                   ELEMENT_DOFS,
                   element_frame,
                   element_length,
                   element_stiffness,
                   element_transformation,
                   shape_matrix,
                   shape_matrix_parts,
)
from .invariants import (
                   GAUSS_POINTS_ALONG_AXIS,
                   NODE_DOFS,
                   BlockInvariants,
                   InvariantBlock,
                   Invariants,
                   assemble_body_invariants,
                   beam_body_invariants,
                   element_invariants,
                   free_coordinates,
                   node_selections,
)
from .materials import Material, material
from .sections import (
                   Section,
                   circle_section,
                   general_section,
                   rectangle_section,
                   rectangle_torsion_constant,
                   rectangular_tube_section,
                   round_tube_section,
)

__all__ = [
    "ELEMENT_DOFS", "element_frame", "element_length", "element_stiffness",
    "element_transformation", "shape_matrix", "shape_matrix_parts",
    "GAUSS_POINTS_ALONG_AXIS", "NODE_DOFS", "Invariants", "InvariantBlock", "BlockInvariants",
    "assemble_body_invariants",
    "beam_body_invariants", "element_invariants", "free_coordinates", "node_selections",
    "Material", "material",
    "Section", "circle_section", "general_section", "rectangle_section",
    "rectangle_torsion_constant", "rectangular_tube_section", "round_tube_section",
]

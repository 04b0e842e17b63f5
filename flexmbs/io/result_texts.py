"""The descriptions a result file keeps beside its energies and its modes (attr
`description`), and the energies a writer may be given without."""

__all__ = ["ENERGY_DESCRIPTIONS", "GEOMETRIC_ENERGIES", "MODE_DESCRIPTIONS"]

GEOMETRIC_ENERGIES = ("strain_axial_force", "strain_foreshortening")  # may be left out
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

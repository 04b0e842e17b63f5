"""The README's model-file reference is kept in step with the reader's schemas."""

from pathlib import Path

from flexmbs.model import toml_reader as tr
from flexmbs.model.description import (CONSTRAINT_FORMULATIONS, CONTACT_TYPES, JOINT_TYPES,
                                      SENSOR_TYPES, SOLVER_METHODS)

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()
REFERENCE = README[README.index("## Model-file reference"):]


def test_every_field_of_the_model_file_is_documented():
    schemas = [tr._MODEL, tr._SOLVER, tr._OUTPUT, tr._MARKER, tr._BODY, tr._JOINT,
               tr._FORCE, tr._JOINT_SENSOR, tr._MARKER_SENSOR, tr._ACTUATOR,
               tr._ACTUATOR_SENSOR, tr._STRAIN_SENSOR, tr._SECTION_SENSOR,
               tr._CENTERLINE_SENSOR, tr._BEAM, tr._BEAM_MARKER, tr._MATERIAL,
               tr._CONTACT, tr._CONTACT_SENSOR] + \
        [schema for _, schema in tr.SECTIONS.values()]
    fields = {f for s in schemas for f in s.fields} | set(tr._DRIVER_BASE)
    fields |= {f for law in tr.LAW_FIELDS.values() for f in law}
    missing = sorted(f for f in fields if f"`{f}`" not in REFERENCE)
    assert not missing, f"fields missing from the README reference: {missing}"


def test_every_type_and_section_is_documented():
    names = set(JOINT_TYPES) | set(SENSOR_TYPES) | set(tr.LAW_FIELDS) | set(tr._SECTIONS) | \
        set(tr.SECTIONS) | set(CONTACT_TYPES) | set(CONSTRAINT_FORMULATIONS)
    missing = sorted(n for n in names if f"`{n}" not in REFERENCE and f"[{n}" not in
                     REFERENCE)
    assert not missing, f"names missing from the README reference: {missing}"
    assert all(f"`{m}`" in README for m in SOLVER_METHODS)

"""The documentation: the model-file reference kept in step with the reader's schemas,
the README's example runs, every link resolves, the site builds without a warning, and
user text names papers and pages of the repository, not documents outside it."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from flexmbs import simulate
from flexmbs.model import toml_reader as tr
from flexmbs.model.description import (
    CONSTRAINT_FORMULATIONS,
    CONTACT_TYPES,
    JOINT_TYPES,
    SENSOR_TYPES,
    SOLVER_METHODS,
)

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = (ROOT / "README.md").read_text()
REFERENCE = (DOCS / "reference" / "model-file.md").read_text()
SOLVERS = (DOCS / "guides" / "solvers.md").read_text()


def test_every_field_of_the_model_file_is_documented():
    schemas = [tr._MODEL, tr._SOLVER, tr._OUTPUT, tr._MARKER, tr._BODY, tr._JOINT,
               tr._FORCE, tr._JOINT_SENSOR, tr._MARKER_SENSOR, tr._ACTUATOR,
               tr._ACTUATOR_SENSOR, tr._STRAIN_SENSOR, tr._SECTION_SENSOR,
               tr._CENTERLINE_SENSOR, tr._BEAM, tr._BEAM_MARKER, tr._MATERIAL,
               tr._CONTACT, tr._CONTACT_SENSOR, tr._FE, tr._FE_INTERFACE, tr._FE_MARKER,
               tr._BODY_SENSOR] + \
        [schema for _, schema in tr.SECTIONS.values()]
    fields = {f for s in schemas for f in s.fields} | set(tr._DRIVER_BASE)
    fields |= {f for law in tr.LAW_FIELDS.values() for f in law}
    missing = sorted(f for f in fields if f"`{f}`" not in REFERENCE)
    assert not missing, f"fields missing from the model-file reference: {missing}"


def test_every_type_and_section_is_documented():
    names = set(JOINT_TYPES) | set(SENSOR_TYPES) | set(tr.LAW_FIELDS) | set(tr._SECTIONS) | \
        set(tr.SECTIONS) | set(CONTACT_TYPES) | set(CONSTRAINT_FORMULATIONS)
    missing = sorted(n for n in names if f"`{n}" not in REFERENCE and f"[{n}" not in
                     REFERENCE)
    assert not missing, f"names missing from the model-file reference: {missing}"
    assert all(f"`{m}`" in SOLVERS for m in SOLVER_METHODS)


def test_the_readme_example_is_the_shipped_arm():
    """data/models/flexible_arm.toml is the README's model file, comments aside."""
    toml = re.search(r"```toml\n(.*?)```", README, re.S).group(1)
    shipped = (ROOT / "data" / "models" / "flexible_arm.toml").read_text()
    assert shipped.endswith(toml)


def test_the_readme_example_runs(tmp_path):
    """The flexible arm of the README: read, started from its static state, run."""
    toml = re.search(r"```toml\n(.*?)```", README, re.S).group(1)
    path = tmp_path / "arm.toml"
    path.write_text(toml)
    model = tr.load_model(path)
    sim = simulate(model, None, t_end=0.05)
    assert sim.status == "finished"
    assert sim.statistics["nsteps"] > 0


def _markdown_files():
    return [ROOT / "README.md"] + sorted(DOCS.rglob("*.md"))


@pytest.mark.parametrize("page", _markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    text = page.read_text()
    missing = []
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if "://" in target or target.startswith("mailto:"):
            continue
        if not (page.parent / target).exists():
            missing.append(target)
    assert not missing, f"{page.name}: links to missing files {missing}"


USER_TEXT = [ROOT / "README.md", *DOCS.rglob("*.md"), *(ROOT / "flexmbs").rglob("*.py"),
             *(ROOT / "data").rglob("*.toml"), *(ROOT / "data").rglob("*.md")]
OUTSIDE = re.compile(r"\bseeds? \d{3}\b|\bS00\d\b|FORMULATION\.md|MODELS\.md|ARCHITECTURE\.md")


def test_user_text_cites_papers_and_pages_of_the_repository():
    """Papers by their authors, the formulation and the benchmark models by their pages
    in docs/explanation; never file numbers or documents that are not in the
    repository."""
    found = [f"{p.relative_to(ROOT)}:{i + 1}: {line.strip()}"
             for p in USER_TEXT for i, line in enumerate(p.read_text().splitlines())
             if OUTSIDE.search(line)]
    found += [f"{p.relative_to(ROOT)}: {m.group(0)!r}" for p in USER_TEXT
              for m in re.finditer(r"\bseed\W*\n\W*\d{3}\b", p.read_text())]
    assert not found, "\n".join(found[:20])


def test_the_documentation_builds_without_warnings(tmp_path):
    r = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going",
                        "-q", "-d", str(tmp_path / "doctrees"), str(DOCS),
                        str(tmp_path / "html")], capture_output=True, text=True,
                       cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    assert (tmp_path / "html" / "reference" / "model-file.html").exists()


GENERATED_TABLES = [  # (benchmark script, its results file, the page showing its tables)
    ("bench_galpha.py", "galpha.json", "explanation/performance.md"),
    ("bench_startup.py", "startup.json", "explanation/performance.md"),
    ("bench_galpha_mechanisms.py", "galpha_mechanisms.json", "explanation/performance.md"),
    ("bench_deflection_bands.py", "deflection_bands.json", "explanation/performance.md"),
    ("bench_crank.py", "crank.json", "explanation/performance.md"),
    ("bench_h2.py", "h2_linear.json", "explanation/performance.md"),
    ("bench_h2_criterion.py", "h2_criterion.json", "explanation/performance.md"),
    ("bench_band_damping.py", "band_damping.json", "explanation/performance.md"),
    ("bench_sweep.py", "sweep.json", "explanation/performance.md"),
    ("bench_modal_derivatives.py", "modal_derivatives.json", "explanation/performance.md"),
    ("bench_galpha.py", "galpha_h2_session.json", "explanation/performance.md"),
    ("bench_integrators.py", "integrators.json", "explanation/performance.md"),
    ("bench_integrators.py", "integrators_step_drift.json", "explanation/performance.md"),
    ("bench_python_calls.py", "python_calls.json", "explanation/performance.md"),
    ("bench_h8.py", "h8.json", "explanation/performance.md"),
    ("bench_geometric.py", "geometric.json", "explanation/performance.md"),
    ("bench_peers_chain.py", "peers_chain_planar.json", "explanation/performance.md"),
    ("bench_peers_chain.py", "peers_chain8.json", "explanation/performance.md"),
    ("bench_peers_chain.py", "peers_chain8_exudyn.json", "explanation/performance.md"),
    ("bench_peers_chain.py", "peers_chain32_planar.json", "explanation/performance.md"),
    ("bench_peers_chain.py", "peers_chain_spatial.json", "explanation/performance.md"),
    ("bench_peers_chain.py", "peers_chain32_spatial.json", "explanation/performance.md"),
    ("bench_peers_chain.py", "peers_chain32_spatial_tight.json", "explanation/performance.md"),
    ("bench_peers_eval.py", "peers_eval.json", "explanation/performance.md"),
    ("bench_peers_flexible.py", "peers_flexible.json", "explanation/performance.md"),
    ("bench_peers_flexible.py", "peers_flexible_spin.json", "explanation/performance.md"),
    ("bench_formulations.py", "formulations.json", "guides/solvers.md"),
    ("bench_rolling_disk.py", "rolling_disk.json", "guides/rolling-contacts.md"),
    ("bench_bdf_kernel.py", "bdf_kernel.json", "explanation/bdf.md"),
    ("bench_fe_bodies.py", "fe_box.json", "explanation/validation.md"),
    ("bench_fe_bodies.py", "fe_exudyn.json", "explanation/validation.md"),
    ("bench_fe_bodies.py", "fe_h2.json", "explanation/validation.md"),
    ("bench_error_test.py", "error_test.json", "explanation/bdf.md"),
    ("bench_viewer_fe.py", "viewer_fe.json", "guides/viewer.md"),
]


@pytest.mark.parametrize("script, results, page", GENERATED_TABLES)
def test_benchmark_tables_are_the_ones_their_results_make(script, results, page):
    """The tables a benchmark prints from its JSON (--table) appear in the docs as
    printed: the figures come from the results file, not from typing."""
    r = subprocess.run([sys.executable, script, "--table", f"results/{results}"],
                       cwd=ROOT / "benchmarks", capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = [line for line in r.stdout.splitlines() if line.startswith("|")]
    text = (DOCS / page).read_text()
    missing = [row for row in rows if row not in text]
    assert rows and not missing, f"{page} lacks rows of {script} --table: {missing[:3]}"

"""The documentation: the model-file reference kept in step with the reader's schemas,
the README's example runs, every link resolves, the site builds without a warning, and
user text names papers and pages of the repository, not documents outside it."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from flexmbs import simulate
from flexmbs.formats import toml_schema as tr
from flexmbs.formats.toml_reader import load_model
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
               tr._BODY_SENSOR, tr._SHAPE] + \
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


def test_every_field_of_a_channel_map_is_documented():
    from flexmbs.analysis import channel_map as cmap

    page = (DOCS / "reference" / "experiment-files.md").read_text()
    fields = set(cmap._EXPERIMENT_FIELDS) | set(cmap._ALIGNMENT_FIELDS) | \
        set(cmap._CHANNEL_FIELDS) | set(cmap.ALIGNMENT_METHODS)
    missing = sorted(f for f in fields if f"`{f}`" not in page and f'`"{f}"`' not in page)
    assert not missing, f"channel-map fields missing from experiment-files.md: {missing}"
    assert all(f"`{u}`" in page for u in cmap.UNITS)


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
    model = load_model(path)
    sim = simulate(model, None, t_end=0.05)
    assert sim.status == "finished"
    assert sim.statistics["nsteps"] > 0


def _markdown_files():
    return [ROOT / "README.md"] + sorted(DOCS.rglob("*.md"))


def _slug(heading):
    """The anchor MyST gives a heading (myst_heading_anchors), as GitHub does: the
    text as shown, lower case, without punctuation but - and _, spaces as -."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = text.replace("`", "").replace("**", "")
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def _anchors(page):
    """The anchors of a Markdown page: its headings (levels 1 to 4) and its explicit
    targets `(name)=`; none for a notebook or another kind of file."""
    if page.suffix != ".md":
        return None
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M)
    headings = re.findall(r"^#{1,4} +(.+?) *$", text, re.M)
    return {_slug(h) for h in headings} | set(re.findall(r"^\((\S+)\)=$", text, re.M))


LINK = re.compile(r"\]\(([^)\s]*)\)")


@pytest.mark.parametrize("page", _markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    """Each relative link of the README and the docs names a file that exists and,
    after #, a heading or target of that page; a link whose text is a path names the
    file it leads to."""
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M)
    text = re.sub(r"^(    |\t).*$", "", text, flags=re.M)  # indented code
    broken = []
    for target in LINK.findall(text):
        if "://" in target or target.startswith("mailto:"):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and (anchors := _anchors(file)) is not None and anchor not in anchors:
            broken.append(f"{target}: no heading or target #{anchor} in {file.name}")
    for shown, target in re.findall(r"\[([\w./-]+\.md)\]\(([^)#]+)", text):
        if (ROOT / shown).resolve() != (page.parent / target).resolve():
            broken.append(f"[{shown}]({target}): the text names another file")
    assert not broken, f"{page.relative_to(ROOT)}: broken links:\n" + "\n".join(broken)


def test_a_broken_internal_link_fails_the_build(tmp_path):
    """The site's build (docs/conf.py, warnings as errors, as `make docs` runs it)
    stops on a link to a page or a heading that does not exist."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "index.md").write_text("# Home\n\n```{toctree}\nother\n```\n\n## A part\n")
    (src / "other.md").write_text("# Other\n\n[fine](index.md#a-part), [gone](bdf.md), "
                                  "[no heading](index.md#no-such-part)\n")
    r = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going",
                        "-q", "-c", str(DOCS), str(src), str(tmp_path / "html")],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode != 0
    warnings = [line for line in r.stderr.splitlines() if "myst.xref_missing" in line]
    assert len(warnings) == 2, r.stderr
    assert "'bdf.md'" in warnings[0] and "'no-such-part'" in warnings[1]


def test_each_public_object_has_one_name_in_the_docs():
    """A function or class of the public API by its name at the top (flexmbs.simulate,
    not flexmbs.simulation.simulate); a module by the path it is imported by
    (flexmbs.model.library, which `from ... import` takes, not the attribute
    flexmbs.library). The API page's autodoc directives name the defining modules."""
    import flexmbs

    wrong = {}
    for name, (module, attribute) in flexmbs._PUBLIC.items():
        if attribute is None:
            if module != f"flexmbs.{name}":
                wrong[f"flexmbs.{name}"] = module
        elif module != "flexmbs":
            wrong[f"{module}.{attribute}"] = f"flexmbs.{name}"
    pattern = re.compile("|".join(re.escape(w) + r"\b" for w in sorted(wrong, key=len)[::-1]))
    found = []
    for page in _markdown_files() + sorted((ROOT / "examples").glob("*.py")):
        text = re.sub(r"^```\{eval-rst\}.*?^```", "", page.read_text(), flags=re.S | re.M)
        for m in pattern.finditer(text):
            found.append(f"{page.relative_to(ROOT)}: {m.group(0)} (write {wrong[m.group(0)]})")
    assert not found, "\n".join(found)


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


@pytest.mark.slow
def test_the_documentation_builds_without_warnings(tmp_path):
    r = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going",
                        "-q", "-d", str(tmp_path / "doctrees"), str(DOCS),
                        str(tmp_path / "html")], capture_output=True, text=True,
                       cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    assert (tmp_path / "html" / "reference" / "model-file.html").exists()


def test_the_command_line_reference_is_the_parsers():
    """docs/reference/command-line-options.md and the synopsis of command-line.md are
    what make_command_line.py writes from flexmbs.cli's parser now: every command and
    option, none that is gone."""
    r = subprocess.run([sys.executable, str(DOCS / "reference" / "make_command_line.py"),
                        "--check"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr + \
        "\nrun .venv/bin/python docs/reference/make_command_line.py"


def test_every_command_and_option_is_in_the_reference():
    """The generated page holds each option string; the hand-written page says what
    each command does."""
    from flexmbs.cli import _parser

    sys.path.insert(0, str(DOCS / "reference"))
    try:
        from make_command_line import commands
    finally:
        sys.path.pop(0)
    options = (DOCS / "reference" / "command-line-options.md").read_text()
    prose = (DOCS / "reference" / "command-line.md").read_text()
    for name, parser in commands(_parser()).items():
        assert f"## `flexmbs {name}`" in options
        assert re.search(rf"^\* `{name}`|^\* `\w+` and `{name}`", prose, re.M), name
        for action in parser._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert f"`{option}`" in options.split(f"## `flexmbs {name}`")[1], option


GENERATED_TABLES = [  # (benchmark script, its results file, the page showing its tables)
    ("bench_headline.py", "headline.json", "explanation/performance.md"),
    ("bench_scaling.py", "scaling.json", "explanation/performance.md"),
    ("bench_scaling.py", "scaling_profile.json", "explanation/performance.md"),
    ("bench_peers_chain.py", "peers_chain_spatial.json", "explanation/performance.md"),
    ("bench_startup.py", "startup.json", "explanation/performance.md"),
    ("bench_sweep.py", "sweep.json", "guides/sweeps.md"),
    ("bench_h2_criterion.py", "h2_criterion.json", "guides/solvers.md"),
    ("bench_band_damping.py", "band_damping.json", "guides/solvers.md"),
    ("bench_formulations.py", "formulations.json", "guides/solvers.md"),
    ("bench_rolling_disk.py", "rolling_disk.json", "guides/rolling-contacts.md"),
    ("bench_bdf_kernel.py", "bdf_kernel.json", "explanation/bdf.md"),
    ("bench_error_test.py", "error_test.json", "explanation/bdf.md"),
    ("bench_reading.py", "reading.json", "reference/result-file.md"),
    ("bench_writing.py", "writing.json", "reference/result-file.md"),
    ("bench_geometric.py", "geometric.json", "explanation/validation.md"),
    ("bench_modal_derivatives.py", "modal_derivatives.json", "explanation/validation.md"),
    ("bench_crank.py", "crank.json", "explanation/validation.md"),
    ("bench_fe_bodies.py", "fe_box.json", "explanation/validation.md"),
    ("bench_fe_bodies.py", "fe_exudyn.json", "explanation/validation.md"),
    ("bench_fe_bodies.py", "fe_h2.json", "explanation/validation.md"),
    ("bench_viewer_fe.py", "viewer_fe.json", "guides/viewer.md"),
    ("bench_control_loop.py", "control_loop.json", "guides/control.md"),
    ("bench_live_view.py", "live_view.json", "guides/viewer.md"),
    ("bench_sampled_control.py", "sampled_control.json", "guides/solvers.md"),
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


def test_the_performance_page_is_short_and_its_tables_come_from_results():
    """Every table row of the performance page is one its benchmarks print from their
    results files (no figure typed in a table), and the page stays under 350 lines."""
    page = DOCS / "explanation" / "performance.md"
    printed = set()
    for script, results, where in GENERATED_TABLES:
        if where == "explanation/performance.md":
            r = subprocess.run([sys.executable, script, "--table", f"results/{results}"],
                               cwd=ROOT / "benchmarks", capture_output=True, text=True)
            printed |= {line for line in r.stdout.splitlines() if line.startswith("|")}
    lines = page.read_text().splitlines()
    typed = [line for line in lines if line.startswith("|") and line not in printed]
    assert not typed, typed[:3]
    assert len(lines) < 350

"""Every bad input ends in one line that names the file, the item and the field, with
exit status 2 and no traceback: the corpus of tests/bad_inputs.py, a wrong type in
every field and an unknown field in every table of the shipped models, and the model
reader fuzzed with hypothesis (it raises ModelError or builds a Model, nothing else).

The commands run in this process (flexmbs.cli.main), so that the corpus costs
milliseconds a case. FLEXMBS_FUZZ_EXAMPLES sets the fuzz tests' examples (300 each)."""

import copy
import datetime
import json
import math
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import h5py
import numpy as np
import pytest
from bad_inputs import (
    BAD_MODELS,
    CLI_CASES,
    CLI_FILES,
    CLI_WARNINGS,
    DELETE,
    FE_FILES,
    PYTHON_CALLS,
    ROBOT,
    SIMULATOR_STEPS,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flexmbs import ModelError, load_model
from flexmbs.analysis.sweep import MAX_SWEEP_CASES, parse_sweep_parameter, sweep_cases
from flexmbs.cli import main
from flexmbs.formats.urdf import urdf_model
from flexmbs.formats.urdf_reader import UrdfError, parse_urdf

MODELS = Path(__file__).resolve().parents[1] / "data" / "models"
FUZZ_EXAMPLES = int(os.environ.get("FLEXMBS_FUZZ_EXAMPLES", "300"))  # per fuzz test
SHIPPED = ["huang_two_link", "four_bar", "huang_eight_link", "rolling_disk",
           "slider_crank_flexible", "huang_rig", "flexible_link_rig"]
BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def toml_text(doc, prefix=()):
    """TOML for a document of tables, numbers, strings, booleans and lists (what the
    model files hold): the values of a table first, then its subtables."""
    lines = [f"{_key(k)} = {_value(v)}" for k, v in doc.items() if not isinstance(v, dict)]
    for k, v in doc.items():
        if isinstance(v, dict):
            lines.append(f"[{'.'.join(_key(p) for p in prefix + (k,))}]")
            lines.append(toml_text(v, prefix + (k,)))
    return "\n".join(lines)


def _key(k):
    return k if BARE_KEY.match(k) else json.dumps(k)


def _value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return "{" + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + "}"


def shipped(name):
    return tomllib.loads((MODELS / f"{name}.toml").read_text())


def edited(doc, path, value):
    """A copy of `doc` with the field at `path` (dotted or a tuple) set to `value`, or
    removed (DELETE)."""
    keys = tuple(path.split(".")) if isinstance(path, str) else tuple(path)
    doc = copy.deepcopy(doc)
    table = doc
    for k in keys[:-1]:
        table = table.setdefault(k, {})
    if value == DELETE:
        table.pop(keys[-1], None)
    else:
        table[keys[-1]] = value
    return doc


def leaves(doc, path=()):
    for k, v in doc.items():
        if isinstance(v, dict):
            yield from leaves(v, path + (k,))
        else:
            yield path + (k,), v


def tables(doc, path=()):
    for k, v in doc.items():
        if isinstance(v, dict):
            yield path + (k,)
            yield from tables(v, path + (k,))


def wrong_type(value):
    """A value of another TOML type than `value`'s."""
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, (int, float, list)):
        return "oops"
    return 7


def flexmbs(capsys, *argv):
    """(exit status, stderr) of `flexmbs ARGV` run in this process."""
    try:
        status = main([str(a) for a in argv])
    except SystemExit as exc:   # argparse's errors
        status = exc.code
    return status, capsys.readouterr().err


def assert_one_clear_line(status, err, source, words, expected_status=2):
    errors = [line for line in err.splitlines() if "error:" in line]
    assert status == expected_status, err
    assert "Traceback" not in err, err
    assert len(errors) == 1, err
    line = errors[0]
    assert source is None or line.startswith(f"flexmbs: error: {source}: "), line
    missing = [w for w in words if w not in line]
    assert not missing, f"{line!r} lacks {missing}"


@pytest.mark.parametrize("model, path, value, words", BAD_MODELS,
                         ids=[f"{m}:{p if isinstance(p, str) else '.'.join(p)}={v!r}"[:90]
                              for m, p, v, _ in BAD_MODELS])
def test_each_bad_model_file_gets_one_line_naming_item_and_field(
        tmp_path, capsys, model, path, value, words):
    bad = tmp_path / "bad.toml"
    bad.write_text(toml_text(edited(shipped(model), path, value)))
    for data in MODELS.glob(f"{model}.*"):  # a model's data files (a mesh) beside it
        if data.suffix != ".toml":
            shutil.copy(data, tmp_path / data.name)
    for name, content in FE_FILES.items():  # and the damaged ones the entries name
        if name in repr(value):
            write = (tmp_path / name).write_bytes if isinstance(content, bytes) else \
                (tmp_path / name).write_text
            write(content)
    status, err = flexmbs(capsys, "run", bad, "-o", tmp_path / "out.h5", "-q")
    assert_one_clear_line(status, err, bad, words)
    assert not (tmp_path / "out.h5").exists()


def test_the_corpus_is_large_and_each_entry_is_one_edit_of_a_shipped_model():
    assert len(BAD_MODELS) + len(CLI_CASES) + len(CLI_WARNINGS) >= 200
    assert len({(m, str(p), repr(v)) for m, p, v, _ in BAD_MODELS}) == len(BAD_MODELS)
    for model, _, _, words in BAD_MODELS:
        assert (MODELS / f"{model}.toml").exists() and words


BUILD_MEMORY = """
import sys
from flexmbs.model.compiled import compile_model
from flexmbs.formats.toml_reader import load_model

def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024

with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # the peak resident set starts again from the present one
before = status("VmRSS")
model = load_model(sys.argv[1], overrides=["bodies.link2.elements=" + sys.argv[2]])
compile_model(model)
print(status("VmHWM") - before)
"""


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="Linux only")
def test_the_memory_a_beam_is_refused_for_bounds_what_building_it_takes():
    """The memory `_check_beam_memory` weighs against the machine's (BEAM_BYTES_PER_ELEMENT
    an element) is at least what building a beam of 400 elements takes, measured in a
    fresh process, and not more than twice it (a bound that refuses what fits is as
    wrong as one that lets through what does not)."""
    import sys

    from flexmbs.model.vocabulary import BEAM_BYTES_PER_ELEMENT

    elements = 400
    r = subprocess.run([sys.executable, "-c", BUILD_MEMORY, str(MODELS / "huang_two_link.toml"),
                        str(elements)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    taken = int(r.stdout.split()[-1])
    bound = BEAM_BYTES_PER_ELEMENT * elements
    assert taken <= bound <= 2 * taken, (taken / elements, BEAM_BYTES_PER_ELEMENT)


def _read_only(folder):
    """Make `folder` one that cannot be written on (a read-only tmpfs as root, no write
    permission otherwise); False where that cannot be done."""
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        return True
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(folder)],
                          capture_output=True)
    return made.returncode == 0


def _damaged_result(path):
    """A result file whose /q (and /u) the writer left shorter than its /time: 10 rows
    committed, /q cut to 5 afterwards."""
    import sys
    sys.path.insert(0, str(Path(__file__).parent))
    from test_results_io import make_writer, rows
    w = make_writer(path)
    t = 0.01 * np.arange(10)
    w.append(t, *rows(t))
    w.close("finished")
    with h5py.File(path, "r+") as f:
        f["q"].resize(5, axis=0)


@pytest.fixture
def cli_folder(tmp_path):
    (tmp_path / "notes.txt").write_text("notes, not a result file\n")
    (tmp_path / "sub").mkdir()
    for name, text in CLI_FILES.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    _damaged_result(tmp_path / "damaged.h5")
    read_only = _read_only(tmp_path / "ro")
    yield tmp_path, read_only
    if read_only and os.geteuid() == 0:
        subprocess.run(["umount", str(tmp_path / "ro")], capture_output=True)
    elif read_only:
        (tmp_path / "ro").chmod(0o755)


@pytest.mark.parametrize("argv, expected, words", CLI_CASES,
                         ids=[" ".join(a)[:80] for a, _, _ in CLI_CASES])
def test_each_bad_command_line_gets_one_clear_line(cli_folder, capsys, argv, expected, words):
    tmp_path, read_only = cli_folder
    if "{tmp}/ro/" in " ".join(argv) and not read_only:
        pytest.skip("no folder that cannot be written on can be made here")
    argv = [a.format(models=MODELS, tmp=tmp_path) for a in argv]
    status, err = flexmbs(capsys, *argv)
    assert_one_clear_line(status, err, None, words, expected)
    assert (tmp_path / "notes.txt").read_text().startswith("notes")
    assert not list(tmp_path.glob("*.toml")), "a model file was written"


@pytest.mark.parametrize("argv, expected, words", CLI_WARNINGS,
                         ids=[" ".join(a)[:80] for a, _, _ in CLI_WARNINGS])
def test_each_unlikely_value_or_damaged_file_gets_one_warning_line(
        cli_folder, capsys, argv, expected, words):
    """A value legal but unlikely in SI units (degrees for radians, rpm, mm, g/cm^3,
    mm/s^2, GPa), or a result file that is not whole: the command does its work and one
    warning line names the item, the field and the likely mistake."""
    tmp_path, _ = cli_folder
    argv = [a.format(models=MODELS, tmp=tmp_path) for a in argv]
    status, err = flexmbs(capsys, *argv)
    assert status == expected, err
    assert "Traceback" not in err and "error:" not in err, err
    said = [line for line in err.splitlines() if line.startswith("flexmbs: warning: ")]
    assert any(all(w in line for w in words) for line in said), err
def _generated_cases():
    """(model, path, value, field words) for a wrong type in every field and an unknown
    field in every table of the shipped models."""
    cases = []
    for name in SHIPPED:
        doc = shipped(name)
        cases += [(name, path, wrong_type(v), path[-1]) for path, v in leaves(doc)]
        cases += [(name, path + ("colour",), 1, "colour") for path in tables(doc)]
    return cases


GENERATED = _generated_cases()


@pytest.mark.parametrize("model, path, value, field", GENERATED,
                         ids=[f"{m}:{'.'.join(p)}" for m, p, _, _ in GENERATED])
def test_a_wrong_type_or_an_unknown_field_anywhere_is_named(
        tmp_path, capsys, model, path, value, field):
    """The field's name is in the line, and so is the item's: the name of the table
    the field belongs to, or the section's for [model], [solver] and [output]."""
    bad = tmp_path / "bad.toml"
    bad.write_text(toml_text(edited(shipped(model), path, value)))
    status, err = flexmbs(capsys, "run", bad, "-o", tmp_path / "out.h5", "-q")
    item = path[0] if path[0] in ("model", "solver", "output", "ground") else path[1]
    assert_one_clear_line(status, err, bad, [field, item])


_scalars = (st.integers(-10**6, 10**6) | st.floats(allow_nan=True, allow_infinity=True)
            | st.booleans() | st.text(max_size=12))
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4), max_leaves=8)


@settings(max_examples=FUZZ_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(model=st.sampled_from(SHIPPED), data=st.data())
def test_fuzz_the_model_reader_on_edited_models(tmp_path, model, data):
    """One to three fields of a shipped model set to arbitrary TOML values, or removed:
    load_model builds a Model or raises ModelError, never anything else."""
    doc = shipped(model)
    paths = [p for p, _ in leaves(doc)] + [p + ("colour",) for p in tables(doc)]
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths))
        doc = edited(doc, path, data.draw(st.just(DELETE) | _values))
    bad = tmp_path / "fuzz.toml"
    bad.write_text(toml_text(doc))
    try:
        load_model(bad)
    except ModelError as exc:
        assert str(bad) in str(exc)


@settings(max_examples=FUZZ_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=200))
def test_fuzz_the_model_reader_on_any_text(tmp_path, text):
    bad = tmp_path / "fuzz.toml"
    bad.write_bytes(text.encode("utf-8", "surrogatepass"))
    try:
        load_model(bad)
    except ModelError as exc:
        assert str(bad) in str(exc)


def test_a_model_file_with_a_byte_order_mark_is_read(tmp_path):
    """Editors on Windows start UTF-8 files with a byte-order mark: read as without."""
    plain = (MODELS / "chain_planar_4.toml").read_text()
    marked = tmp_path / "marked.toml"
    marked.write_bytes(b"\xef\xbb\xbf" + plain.encode())
    assert load_model(marked).name == "chain_planar_4"


# ------------------------------------------------------------ property tests: no hang
HANG = datetime.timedelta(seconds=5)  # an example taking this long is a failure


def _urdf_result(path):
    """What reading the URDF `path` gives: a model, or one UrdfError naming the file."""
    try:
        return urdf_model(path)[1]
    except UrdfError as exc:
        assert str(exc).startswith(str(path)) or str(exc).startswith("--flexible"), exc
        assert "\n" not in str(exc)
        return exc


@settings(max_examples=FUZZ_EXAMPLES, deadline=HANG,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=300))
def test_the_urdf_reader_on_any_text_ends_with_a_model_or_one_line(tmp_path, text):
    """Any text: a model or one UrdfError naming the file (_urdf_result), never another
    exception, never a hang; text without a <robot> element is always refused."""
    bad = tmp_path / "fuzz.urdf"
    bad.write_bytes(text.encode("utf-8", "surrogatepass"))
    result = _urdf_result(bad)
    if "<robot" not in text:
        assert isinstance(result, UrdfError), result


_URDF_EDITS = st.sampled_from([
    ("cut", None), ("drop", '<link name="base"/>'), ("drop", "</robot>"),
    ("swap", ('link="arm"', 'link="forearm"')), ("swap", ('link="forearm"', 'link="arm"')),
    ("swap", ('link="base"', 'link="forearm"')), ("swap", ('"revolute"', '"fixed"')),
    ("swap", ('"revolute"', '"floating"')), ("swap", ('"revolute"', '"planar"')),
    ("swap", ('value="1.0"', 'value="-1"')), ("swap", ('value="0.5"', 'value="nan"')),
    ("swap", ('xyz="0 1 0"', 'xyz="0 0 0"')), ("swap", ('xyz="0 0 0.5"', 'xyz="0 0"')),
    ("swap", ('ixx="0.02"', 'ixx="1e308"')), ("swap", ('name="elbow"', 'name="shoulder"')),
    ("swap", ('name="arm"', 'name="base"')), ("swap", ('"0.01"', '"-5"')),
    ("copy", '  <joint name="shoulder"'), ("copy", '  <link name="arm">'),
])


@settings(max_examples=FUZZ_EXAMPLES, deadline=HANG,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(_URDF_EDITS, min_size=1, max_size=4), data=st.data())
def test_the_urdf_reader_on_edited_robots_ends_with_a_model_or_one_line(tmp_path, edits, data):
    """A robot edited a few times (cut, a line dropped, names and values swapped, a
    joint or link copied, which can make loops, two parents, names twice): a model or
    one UrdfError, never another exception, never a hang."""
    text = ROBOT
    for kind, what in edits:
        if kind == "cut":
            text = text[: data.draw(st.integers(0, len(text)))]
        elif kind == "drop":
            text = text.replace(what, "", 1)
        elif kind == "swap":
            text = text.replace(what[0], what[1], 1)
        else:
            at = text.find(what)
            if at >= 0:
                end = text.find("</", at)
                end = text.find(">", end) + 1
                text = text[:end] + "\n" + text[at:end] + text[end:]
    path = tmp_path / "edited.urdf"
    path.write_text(text)
    got = _urdf_result(path)
    if not isinstance(got, UrdfError):  # a model: a tree of the file's links
        robot = parse_urdf(path)
        assert len(robot.joints) == len(robot.links) - 1


@settings(max_examples=FUZZ_EXAMPLES, deadline=HANG)
@given(text=st.text(max_size=60) | st.builds(
    lambda path, lo, hi, n: f"{path}={lo}:{hi}:{n}",
    st.sampled_from(["a.b", "joints.j1.initial", "", " "]),
    st.floats(allow_nan=True, allow_infinity=True) | st.integers(-10**30, 10**30),
    st.floats(allow_nan=True, allow_infinity=True) | st.integers(-10**30, 10**30),
    st.integers(-10**30, 10**30) | st.text(max_size=6)))
def test_param_parsing_never_hangs_nor_makes_more_than_the_limit(text):
    """`--param` text of any kind: a parameter of at most MAX_SWEEP_CASES values, made
    on demand (its first and last at once), or one ModelError; never a hang, never
    memory for all the values of a range."""
    try:
        p = parse_sweep_parameter(text)
    except ModelError as exc:
        assert "--param" in str(exc) and "\n" not in str(exc)
        return
    assert 1 <= len(p.values) <= MAX_SWEEP_CASES
    assert isinstance(p.values[0], str) and isinstance(p.values[-1], str)


@settings(max_examples=FUZZ_EXAMPLES, deadline=HANG)
@given(counts=st.lists(st.integers(1, 10**6), min_size=1, max_size=6),
       paths=st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=6, max_size=6))
def test_sweep_cases_are_counted_before_they_are_made(counts, paths):
    """Parameters of up to a million values each: their product is counted first, and a
    sweep of more than MAX_SWEEP_CASES, or with a path twice, is one ModelError; the
    cases of one within it are made as they are asked for."""
    params = [parse_sweep_parameter(f"{path}=0:1:{min(n, MAX_SWEEP_CASES)}")
              for path, n in zip(paths, counts)]
    try:
        cases = sweep_cases(params)
    except ModelError as exc:
        assert "--param" in str(exc)
        assert (len({p.path for p in params}) < len(params)
                or math.prod(len(p.values) for p in params) > MAX_SWEEP_CASES)
        return
    assert len(cases) == math.prod(len(p.values) for p in params) <= MAX_SWEEP_CASES
    assert cases[-1] == [f"{p.path}={p.values[-1]}" for p in params]


def test_the_mesh_checks_pass_the_formats_meshio_writes(tmp_path):
    """The checks before meshio (flexmbs.elements.gmsh_text) and after it pass the plate
    written as gmsh 2.2 and 4.1, as text and binary, and as VTU: the same nodes and
    tetrahedra."""
    meshio = pytest.importorskip("meshio")
    from flexmbs.elements.fe_files import read_mesh

    plate = meshio.read(MODELS / "fe_plate.msh")
    points, tets, _, _ = read_mesh(MODELS / "fe_plate.msh")
    for name, fmt, binary in (("a.msh", "gmsh22", False), ("b.msh", "gmsh", False),
                              ("c.msh", "gmsh", True), ("d.vtu", None, None)):
        kw = {} if fmt is None else {"file_format": fmt, "binary": binary}
        meshio.write(tmp_path / name, plate, **kw)
        p, t, _, _ = read_mesh(tmp_path / name)
        assert np.array_equal(p, points) and np.array_equal(t, tets), name


@pytest.fixture(scope="module")
def rig_simulator():
    import flexmbs

    sim = flexmbs.Simulator(MODELS / "flexible_link_rig.toml")
    yield sim
    sim.close()


@pytest.mark.parametrize("args, kwargs, words", SIMULATOR_STEPS,
                         ids=[repr(a)[:40] + repr(k)[:40] for a, k, _ in SIMULATOR_STEPS])
def test_each_bad_step_of_the_python_api_gets_one_line(rig_simulator, args, kwargs, words):
    """A bad step is refused before any work, on one line naming the model file, and
    leaves the run where it was."""
    before = rig_simulator.time
    with pytest.raises(ModelError) as err:
        rig_simulator.step(*args, **kwargs)
    line = str(err.value)
    assert "\n" not in line and line.startswith(str(MODELS / "flexible_link_rig.toml"))
    missing = [w for w in words if w not in line]
    assert not missing, f"{line!r} lacks {missing}"
    assert rig_simulator.time == before


SHIPPED_FILES = sorted(MODELS.glob("*.toml")) + sorted(
    (MODELS.parents[1] / "examples").glob("*.toml"))


@pytest.mark.parametrize("path", SHIPPED_FILES, ids=[p.name for p in SHIPPED_FILES])
def test_each_shipped_model_runs_without_a_warning(tmp_path, capsys, path):
    """A shipped model or example says nothing it would have to explain: no warning
    from its file, its compilation, its basis checks or a short run of it."""
    status, err = flexmbs(capsys, "run", path, "-o", tmp_path / "out.h5", "--t-end", 0.05,
                          "--output-step", 0.01, "-q")
    assert status == 0, err
    assert "warning" not in err.lower(), err


@pytest.mark.parametrize("model, call, args, kwargs, words", PYTHON_CALLS,
                         ids=[f"{m}.{c}{kw!r}"[:80] for m, c, _, kw, _ in PYTHON_CALLS])
def test_each_bad_call_of_the_python_api_gets_one_line(model, call, args, kwargs, words):
    path = MODELS / f"{model}.toml"
    with pytest.raises(ModelError) as err:
        if call == "load_model":
            load_model(path, *args, **kwargs)
        else:
            getattr(load_model(path), call)(*args, **kwargs)
    line = str(err.value)
    assert "\n" not in line
    missing = [w for w in words if w not in line]
    assert not missing, f"{line!r} lacks {missing}"


def test_a_joint_that_turns_a_whole_turn_either_way_is_meant():
    """Industrial arms' wrists turn a whole turn either way, their limits printed
    rounded (a UR5's -6.28319 and 6.28319 rad): meant, no note; two turns and more
    (90, degrees for radians) are noted."""
    from flexmbs.checks.plausibility import plausibility_notes
    from flexmbs.model.library import chain_model

    def notes(limits):
        model = chain_model(2)
        joint = next(iter(model.joints.values()))
        joint.limits = np.array([limits], float)
        joint.limit_stiffness = np.array([100.0])
        return [n for n in plausibility_notes(model) if '"limits"' in n]

    assert notes([-6.28319, 6.28319]) == []
    assert notes([-12.0, 12.0]) == []
    (note,) = notes([-90.0, 90.0])
    assert "-90 rad" in note and "two turns" in note and "degrees" in note
    assert notes([-np.inf, 1.5]) == [] and notes([-np.inf, np.inf]) == []
    (note,) = notes([-np.inf, 90.0])
    assert "90 rad" in note

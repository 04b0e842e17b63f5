"""Every bad input ends in one line that names the file, the item and the field, with
exit status 2 and no traceback: the corpus of tests/bad_inputs.py, a wrong type in
every field and an unknown field in every table of the shipped models, and the model
reader fuzzed with hypothesis (it raises ModelError or builds a Model, nothing else).

The commands run in this process (flexmbs.cli.main), so that the corpus costs
milliseconds a case. FLEXMBS_FUZZ_EXAMPLES sets the fuzz tests' examples (300 each)."""

import copy
import json
import math
import os
import re
import shutil
import tomllib
from pathlib import Path

import pytest
from bad_inputs import BAD_MODELS, CLI_CASES, DELETE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flexmbs import ModelError, load_model
from flexmbs.cli import main

MODELS = Path(__file__).resolve().parents[1] / "data" / "models"
FUZZ_EXAMPLES = int(os.environ.get("FLEXMBS_FUZZ_EXAMPLES", "300"))  # per fuzz test
SHIPPED = ["huang_two_link", "four_bar", "huang_eight_link", "rolling_disk",
           "slider_crank_flexible", "huang_rig", "rotary_flexible_link"]
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
    status, err = flexmbs(capsys, "run", bad, "-o", tmp_path / "out.h5", "-q")
    assert_one_clear_line(status, err, bad, words)
    assert not (tmp_path / "out.h5").exists()


def test_the_corpus_is_large_and_each_entry_is_one_edit_of_a_shipped_model():
    assert len(BAD_MODELS) + len(CLI_CASES) >= 150
    assert len({(m, str(p), repr(v)) for m, p, v, _ in BAD_MODELS}) == len(BAD_MODELS)
    for model, _, _, words in BAD_MODELS:
        assert (MODELS / f"{model}.toml").exists() and words


@pytest.mark.parametrize("argv, expected, words", CLI_CASES,
                         ids=[" ".join(a)[:80] for a, _, _ in CLI_CASES])
def test_each_bad_command_line_gets_one_clear_line(tmp_path, capsys, argv, expected, words):
    (tmp_path / "notes.txt").write_text("notes, not a result file\n")
    (tmp_path / "sub").mkdir()
    argv = [a.format(models=MODELS, tmp=tmp_path) for a in argv]
    status, err = flexmbs(capsys, *argv)
    assert_one_clear_line(status, err, None, words, expected)
    assert (tmp_path / "notes.txt").read_text().startswith("notes")


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

"""The records of a fit from a fit file, and a stopped fit's from its fit.json.

A fit file (TOML) names the records one `flexmbs fit --records FILE` fits at once,
sharing the values its `param` list names:

    param = ["frictions.bearings.coulomb=0:0.016", "actuators.motor.torque_constant"]
    set = ["frictions.bearings.coulomb=0.0096"]      # applies to every record

    [records.slow]                                   # one table per record
    model = "rig.toml"                               # paths from the fit file's folder
    experiment = "slow.csv"
    map = "slow.map.toml"
    set = ["controllers.servo.inputs.0.gain=20.0"]   # this record's own settings
    param = ["joints.shaft.initial"]                 # values of this record alone
    window = [0.0, 1.5]                              # s of model time (default: all)

`group` (HDF5), `gaps` and `offset` (a starting time offset instead of the map's
alignment, s) may be given per record too. A fit's fit.json holds the same (the
records, the shared values, the settings) and the point it reached:
`resume_records` makes the records start there.
"""

from __future__ import annotations

import json
import math
import os
import tomllib
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ModelError
from .fit_record import FitRecord
from .fit_values import FitParameter, parse_parameter

__all__ = ["read_fit_file", "resume_records", "record_of"]

RECORD_FIELDS = {
    "model": str,
    "experiment": str,
    "map": str,
    "set": list,
    "param": list,
    "window": list,
    "group": str,
    "gaps": str,
    "offset": (int, float),
}
TOP_FIELDS = {"param": list, "set": list, "records": dict}


def _check_fields(
    table: Mapping[str, Any], fields: Mapping[str, Any], item: str | None, source: str
) -> None:
    for key, value in table.items():
        if key not in fields:
            raise ModelError(
                f'unknown field "{key}": expected one of ' + ", ".join(fields), item, source=source
            )
        kind = fields[key]
        if isinstance(value, bool) or not isinstance(value, kind):
            names = {str: "a string", list: "a list", dict: "a table"}
            expected = names.get(kind, "a number") if not isinstance(kind, tuple) else "a number"
            raise ModelError(f"expected {expected}, got {value!r}", item, key, source)


def _strings(value: Sequence[Any], item: str | None, key: str, source: str) -> list[str]:
    if not all(isinstance(v, str) for v in value):
        raise ModelError("expected a list of strings", item, key, source)
    return list(value)


def _window(value: Sequence[Any], item: str, source: str) -> tuple[float, float]:
    if (
        len(value) != 2
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
        or not (math.isfinite(value[0]) and math.isfinite(value[1]) and 0 <= value[0] < value[1])
    ):
        raise ModelError(
            f"expected [T0, T1] with 0 <= T0 < T1 (s of model time), got {value!r}",
            item,
            "window",
            source,
        )
    return float(value[0]), float(value[1])


def record_of(
    name: str,
    model: str,
    experiment_path: str,
    map_path: str,
    overrides: Sequence[str] = (),
    parameters: Sequence[FitParameter] = (),
    window: tuple[float, float] | None = None,
    group: str | None = None,
    gaps: str | None = None,
    offset: float | None = None,
) -> FitRecord:
    """A FitRecord from its files: the channel map read, the experiment read with
    the map's time column and group (or `group`)."""
    from .channel_map import load_channel_map
    from .experiment import read_experiment

    channel_map = load_channel_map(map_path)
    experiment = read_experiment(
        experiment_path, channel_map.time_name, group if group is not None else channel_map.group
    )
    return FitRecord(
        model,
        experiment,
        channel_map,
        overrides=list(overrides),
        parameters=list(parameters),
        window=window,
        name=name,
        gaps=gaps,
        offset=offset,
        group=group,
    )


def read_fit_file(path: str | os.PathLike[str]) -> tuple[list[FitRecord], list[FitParameter]]:
    """The records of the fit file `path` and the values they share."""
    source = os.fspath(path)
    try:
        with open(source, "rb") as f:
            doc = tomllib.load(f)
    except OSError as exc:
        raise ModelError(f"cannot read the fit file: {exc.strerror}", source=source) from None
    except tomllib.TOMLDecodeError as exc:
        raise ModelError(f"not a TOML file: {exc}", source=source) from None
    _check_fields(doc, TOP_FIELDS, None, source)
    here = os.path.dirname(source)
    common = _strings(doc.get("set", []), None, "set", source)
    shared = [parse_parameter(p) for p in _strings(doc.get("param", []), None, "param", source)]
    tables = doc.get("records", {})
    if not tables:
        raise ModelError(
            "no records: expected a [records.NAME] table for each record to fit",
            None,
            "records",
            source,
        )
    records = []
    for name, table in tables.items():
        item = f'record "{name}"'
        if not isinstance(table, dict):
            raise ModelError("expected a table", item, source=source)
        _check_fields(table, RECORD_FIELDS, item, source)
        for key in ("model", "experiment", "map"):
            if key not in table:
                raise ModelError(f"missing: expected the {key} file's path", item, key, source)
        window = _window(table["window"], item, source) if "window" in table else None
        records.append(
            record_of(
                name,
                os.path.join(here, table["model"]),
                os.path.join(here, table["experiment"]),
                os.path.join(here, table["map"]),
                common + _strings(table.get("set", []), item, "set", source),
                [
                    parse_parameter(p)
                    for p in _strings(table.get("param", []), item, "param", source)
                ],
                window,
                table.get("group"),
                table.get("gaps"),
                float(table["offset"]) if "offset" in table else None,
            )
        )
    return records, shared


def resume_records(
    path: str | os.PathLike[str],
) -> tuple[list[FitRecord], list[FitParameter], dict[str, Any]]:
    """The records, shared values and settings of the fit whose fit.json is `path`,
    each record starting at the point the fit reached (its values as --set, its
    offset given)."""
    source = os.fspath(path)
    try:
        with open(source, encoding="utf-8") as f:
            doc = json.load(f)
        fit = doc["fit"]
        records, values = fit["records"], fit["values"]
        options = dict(doc.get("options") or {})
        shared = [parse_parameter(p) for p in fit["shared"]]
    except OSError as exc:
        raise ModelError(f"cannot read the fit's report: {exc.strerror}", source=source) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise ModelError(
            f"not the fit.json of a flexmbs fit ({type(exc).__name__}: {exc}): expected the "
            "fit.json a fit wrote",
            "--resume",
            source=source,
        ) from None
    several = len(records) > 1
    out = []
    for r in records:
        reached = {a.partition("=")[0].strip() for a in r["assignments"]}
        kept = [o for o in r["overrides"] if o.partition("=")[0].strip() not in reached]
        name = r["name"]
        offset = next(
            (
                v["value"]
                for v in values
                if v["path"] == "offset" and (v.get("record") == name or not several)
            ),
            r["offset"],
        )
        out.append(
            record_of(
                name if several else "",
                r["model"],
                r["experiment"],
                r["map"],
                kept + list(r["assignments"]),
                [parse_parameter(p) for p in r["parameters"]],
                tuple(r["window"]) if r["window"] is not None else None,
                r.get("group"),
                r.get("gaps"),
                float(offset),
            )
        )
    return out, shared, options

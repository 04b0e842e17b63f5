"""Experiment files, channel maps, comparison and identification.

The synthetic RIG experiment (data/experiments/rig_30deg_synthetic.csv) is the RIG
model sampled at 200 Hz from 0.7135 s before its release, written as raw voltages
through the rig's calibrations with known Gaussian noise (its header, and
data/experiments/make_synthetic_rig.py). Compared with a run of the same model, the
residual is that noise; the tolerances below come from the noise statistics, the
integration tolerance and the sampling.
"""

import importlib.util
import json
import math
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import h5py
import numpy as np
import pytest
from cli_in_process import flexmbs_here

from flexmbs import load_model, open_result, simulate
from flexmbs.analysis import channel_map as cmap_mod
from flexmbs.analysis.channel_map import (
    Alignment,
    load_channel_map,
    loads_channel_map,
    lowpass_filter,
    measured_signals,
    noise_power_gain,
    simulated_signals,
)
from flexmbs.analysis.compare import compare_files
from flexmbs.analysis.experiment import read_experiment, resolve_gaps
from flexmbs.analysis.fit import noise_standard_deviation, parse_parameter, set_toml_values
from flexmbs.errors import ExperimentError, ModelError

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENTS = ROOT / "data" / "experiments"
RIG = ROOT / "data" / "models" / "huang_rig.toml"
CSV = EXPERIMENTS / "rig_30deg_synthetic.csv"
MAP = EXPERIMENTS / "rig_30deg_synthetic.map.toml"

RELEASE = 0.7135  # s, record time of the release (the file's header)
SAMPLE_INTERVAL = 0.005  # s
NOISE_V = {"pot1": 1e-3, "pot2": 1e-3, "bridge": 5e-6}  # V, the file's header
TRUE = {"joints.joint2.stiffness": 0.1, "joints.joint2.damping": 0.098,
        "bodies.link2.alpha": 0.00025}
RUN_OUTPUT_STEP = 0.0005  # s: a tenth of the sampling, so that the spline through the
# outputs follows the strain's 40 Hz ring after the release (interpolation error
# ~ (omega h)^4 / 384 = 2e-7 of its amplitude)
RUN_RTOL, RUN_ATOL = 1e-8, 1e-10
RUN_T_END = 9.3  # s: covers the record after the release (9.2815 s)


def flexmbs(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "flexmbs", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def _generator():
    spec = importlib.util.spec_from_file_location("make_synthetic_rig",
                                                  EXPERIMENTS / "make_synthetic_rig.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(path, overrides=()):
    sim = simulate(load_model(RIG, overrides=list(overrides)), path, t_end=RUN_T_END,
                   rtol=RUN_RTOL, atol=RUN_ATOL, output_step=RUN_OUTPUT_STEP)
    assert sim.success, sim.message
    return path


@pytest.fixture(scope="module")
def true_run(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("runs") / "rig_true.h5")


@pytest.fixture(scope="module")
def wrong_damping_run(tmp_path_factory):
    """joint 2's damper doubled (0.196 N m s/rad)."""
    return _run(tmp_path_factory.mktemp("runs") / "rig_wrong.h5",
                ["joints.joint2.damping=0.196"])


@pytest.fixture(scope="module")
def channel_map():
    return load_channel_map(MAP)


@pytest.fixture(scope="module")
def measured(channel_map):
    return measured_signals(channel_map, read_experiment(CSV))


def _simulated(result_path, channel_map):
    r = open_result(result_path)
    return simulated_signals(r.time, r.sensors, cmap_mod.sensor_quantities(r.model_json),
                             channel_map, r.path)


def _noise_si(channel_map):
    """sigma of each map channel's noise in SI units: the raw noise through |gain|."""
    return {c.name: NOISE_V[c.experiment] * abs(c.gain) * c.unit_factor
            for c in channel_map.channels}


# ------------------------------------------------------------------ the files
def test_synthetic_file_is_what_its_script_writes():
    """The shipped CSV is the script's output: the same values to the rounding of the
    voltages (1e-7 V) plus the run's tolerance (rtol 1e-10 of ~1.5 V)."""
    time, raw, header = _generator().synthetic_record()
    exp = read_experiment(CSV)
    assert exp.comments[0].startswith("SYNTHETIC EXPERIMENT")
    assert any("0.7135" in line for line in exp.comments)
    assert exp.units == {"time": "s", "pot1": "V", "pot2": "V", "bridge": "V"}
    assert exp.time == pytest.approx(time, abs=1e-12)
    for name, values in raw.items():
        assert np.max(np.abs(exp.channels[name] - values)) <= 0.5e-7 + 1e-9


def test_rig_calibrations_are_the_instruments(channel_map):
    """The map's gain/offset/bias/sign/unit reproduce docs/explanation/benchmark-models.md's
    formulas, and
    raw_from_si inverts them."""
    v = np.array([0.3, 1.27, 2.1])
    deg = math.pi / 180.0
    assert channel_map.channel("theta1").calibrate(v) == pytest.approx((1.27 - v) * 100 * deg)
    assert channel_map.channel("theta2").calibrate(v) == pytest.approx((v - 1.26) * 115 * deg)
    vb = np.array([0.0, 2.5e-3, -1e-3])
    assert channel_map.channel("strain").calibrate(vb) == pytest.approx(
        vb / 36.7 - 0.00007, abs=1e-15)
    for ch in channel_map.channels:
        assert ch.calibrate(ch.raw_from_si([0.2, -0.1])) == pytest.approx([0.2, -0.1])


def test_noise_power_gain_is_the_filters_fourth_power_integral():
    """g = sum h_k^2 of the forward-backward filter equals (2/fs) int_0^{fs/2} |H|^4 df
    (Parseval; |H|^2 of the Butterworth run twice), by the midpoint rule."""
    from scipy.signal import butter, sosfreqz
    fs = 200.0
    for cutoff, order in ((20.0, 4), (5.0, 2), (60.0, 8)):
        sos = butter(order, cutoff, fs=fs, output="sos")
        n = 2 ** 16
        f = (np.arange(n) + 0.5) * (fs / 2) / n
        _, h = sosfreqz(sos, worN=f, fs=fs)
        assert noise_power_gain(1 / fs, cutoff, order) == pytest.approx(
            np.mean(np.abs(h) ** 4), rel=1e-6)


def test_noise_estimate_from_third_differences(measured, channel_map):
    """noise_standard_deviation recovers the header's noise within 4 standard
    deviations of the estimator, measured here on 400 draws of white noise as long as
    the record (the swing and the bending mode add (2 pi f dt)^3 of their amplitude to
    the third differences: below 1e-3 of the noise)."""
    rng = np.random.default_rng(1)
    n = len(measured.time)
    draws = [noise_standard_deviation(rng.normal(size=n)) for _ in range(400)]
    bias, sd = np.mean(draws) - 1.0, np.std(draws)
    sigma = _noise_si(channel_map)
    for name, values in measured.values.items():
        ratio = noise_standard_deviation(values) / sigma[name]
        assert abs(ratio - 1.0 - bias) < 4 * sd, (name, ratio, sd)


# ------------------------------------------------------------------ alignment
def test_cross_correlation_finds_the_release(measured, channel_map, true_run):
    """The least-squares delay of a signal s in white noise sigma has the standard
    deviation sigma / sqrt(sum_k s'(t_k)^2); the offset is within 4 of them."""
    sim = _simulated(true_run, channel_map)
    offset, text = cmap_mod.cross_correlation_offset(channel_map, measured, sim)
    t = measured.time[measured.time >= RELEASE] - RELEASE
    sd = _noise_si(channel_map)["theta2"] / math.sqrt(np.sum(sim.rate_at("theta2", t) ** 2))
    assert abs(offset - RELEASE) < 4 * sd
    assert "cross-correlation" in text


@pytest.mark.parametrize("threshold", [0.05, 0.1])
def test_release_detection(measured, channel_map, true_run, threshold):
    """A threshold crossing timed in noise sigma at the speed v has an error of about
    sigma / v (a sample on each side of the crossing: sqrt(2) of it); 4 allowed."""
    sim = _simulated(true_run, channel_map)
    m = replace(channel_map, alignment=Alignment("release", channel="theta2",
                                                 threshold=threshold))
    offset, text = cmap_mod.release_offset(m, measured, sim)
    ts = np.linspace(0.0, 1.0, 20001)
    dev = np.abs(sim.at("theta2", ts) - sim.values["theta2"][0])
    t_cross = ts[np.argmax(dev > threshold)]
    speed = abs(float(sim.rate_at("theta2", t_cross)))
    sd = math.sqrt(2) * _noise_si(channel_map)["theta2"] / speed
    assert abs(offset - RELEASE) < 4 * sd
    assert "release" in text


# ------------------------------------------------------------------ comparison
def _filtered_noise_rms(channel_map, time):
    """RMS of the file's actual noise (the script's seeded draw) on the samples `time`
    (record time), through each channel's calibration gain and filter."""
    names = [c.experiment for c in channel_map.channels]
    noise = _generator().measurement_noise(names, 2000)
    record = np.arange(2000) * SAMPLE_INTERVAL
    keep = np.isin(np.round(record / SAMPLE_INTERVAL), np.round(time / SAMPLE_INTERVAL))
    out = {}
    for c in channel_map.channels:
        n = noise[c.experiment][keep] * c.gain * c.unit_factor
        out[c.name] = float(np.sqrt(np.mean(cmap_mod.filtered(c, n, SAMPLE_INTERVAL) ** 2)))
    return out


def test_true_model_compares_at_the_noise_level(channel_map, true_run):
    """Against a run of the true model at the true offset the residual is the file's
    noise: the RMSE equals the RMS of the noise actually drawn (calibrated, filtered)
    to 0.1 % (the run's error, ~1e-8 of the range, is 1e-5 of the noise); and the NRMSE
    is the header's noise level sigma sqrt(g) / range within 4 standard deviations of
    an RMS of n correlated samples, sqrt(sum_k rho_k^2 / (2 n)) relative (rho the
    autocorrelation of the filtered noise)."""
    c = compare_files(true_run, CSV, MAP, offset=RELEASE)
    actual = _filtered_noise_rms(channel_map, c.time + RELEASE)
    sigma = _noise_si(channel_map)
    n = len(c.time)
    for ch in c.channels:
        assert ch.rmse == pytest.approx(actual[ch.name], rel=1e-3)
        m = channel_map.channel(ch.name)
        g = noise_power_gain(SAMPLE_INTERVAL, m.lowpass, m.lowpass_order)
        if m.lowpass is None:
            rho2 = 1.0
        else:
            impulse = np.zeros(801)
            impulse[400] = 1.0
            h = lowpass_filter(impulse, SAMPLE_INTERVAL, m.lowpass, m.lowpass_order)
            acf = np.correlate(h, h, "full") / np.dot(h, h)
            rho2 = float(np.sum(acf ** 2))
        expected = sigma[ch.name] * math.sqrt(g) / ch.experiment_range
        assert ch.nrmse == pytest.approx(expected, rel=4 * math.sqrt(rho2 / (2 * n)))
        assert ch.correlation > 1 - 1e-3
    assert n == 1857


def test_spectral_peaks_and_alignment_of_the_true_model(channel_map, true_run):
    """With the map's alignment (cross-correlation), the experiment's spectral peaks
    are the simulation's to within the resolution 1/T; theta2's main peak is the swing
    frequency counted from the run's zero crossings (the swing slows with amplitude,
    by less than 1 %: well inside a bin of 0.11 Hz); every lag is below a sample."""
    c = compare_files(true_run, CSV, MAP)
    spec = c.spectra["strain"]
    assert spec.resolution == pytest.approx(1 / (len(c.time) * SAMPLE_INTERVAL), rel=1e-9)
    for ch in c.channels:
        assert len(ch.peaks_experiment) == len(ch.peaks_simulation) >= 1
        assert np.allclose(ch.peaks_experiment, ch.peaks_simulation, atol=spec.resolution)
        assert abs(ch.lag) < SAMPLE_INTERVAL
    r = open_result(true_run)
    theta2 = r.sensors["theta2"] - np.mean(r.sensors["theta2"])
    ups = np.flatnonzero((theta2[:-1] < 0) & (theta2[1:] >= 0))
    swing = (len(ups) - 1) / (r.time[ups[-1]] - r.time[ups[0]])
    assert c.channel("theta2").peaks_experiment[0] == pytest.approx(swing,
                                                                    abs=spec.resolution / 2)
    strain = c.channel("strain")
    assert len(strain.peaks_experiment) >= 3  # the swing, its harmonics, the bending mode


def test_wrong_damping_raises_the_nrmse(channel_map, true_run, wrong_damping_run):
    """Joint 2's damper doubled: the swing decays at twice the rate, and after a few
    periods its amplitude is tens of percent off, far above the 0.2 % noise. The
    NRMSE is the noise and the model difference d added in quadrature,
    NRMSE^2 = (rms(d)^2 + rms(noise)^2 - 2 mean(d noise)) / range^2, the cross term
    2 mean(d noise) with the standard deviation 2 rms(d) rms(noise) / sqrt(g n) (d is
    slow: the filtered noise's autocorrelation sums to 1/g); 4 of those allowed."""
    right = compare_files(true_run, CSV, MAP)
    wrong = compare_files(wrong_damping_run, CSV, MAP)
    sim_true = _simulated(true_run, channel_map)
    sim_wrong = _simulated(wrong_damping_run, channel_map)
    t = wrong.time
    n = len(t)
    noise = _filtered_noise_rms(channel_map, t + wrong.offset)
    for ch in wrong.channels:
        m = channel_map.channel(ch.name)
        d = (cmap_mod.filtered(m, sim_wrong.at(ch.name, t), SAMPLE_INTERVAL)
             - cmap_mod.filtered(m, sim_true.at(ch.name, t + wrong.offset - RELEASE),
                                 SAMPLE_INTERVAL))
        rms_d = float(np.sqrt(np.mean(d ** 2)))
        expected = math.hypot(rms_d, noise[ch.name]) / ch.experiment_range
        g = noise_power_gain(SAMPLE_INTERVAL, m.lowpass, m.lowpass_order)
        slack = 4 * 2 * rms_d * noise[ch.name] / math.sqrt(g * n) / ch.experiment_range ** 2
        assert ch.nrmse ** 2 == pytest.approx(expected ** 2, abs=slack)
        assert ch.nrmse > 10 * right.channel(ch.name).nrmse


def test_hdf5_experiment_compares_as_the_csv(tmp_path, true_run):
    """The same record in an HDF5 group gives the same comparison."""
    exp = read_experiment(CSV)
    h5 = tmp_path / "rig.h5"
    with h5py.File(h5, "w") as f:
        g = f.create_group("rig/run1")
        g.attrs["description"] = "synthetic"
        g.create_dataset("time", data=exp.time * 1e3).attrs["unit"] = "ms"
        for name, values in exp.channels.items():
            g.create_dataset(name, data=values).attrs["unit"] = "V"
        g.create_dataset("matrix", data=np.zeros((3, 3)))  # not a channel
    read = read_experiment(h5)
    assert read.group == "/rig/run1" and read.comments == ["description: synthetic"]
    assert sorted(read.channels) == ["bridge", "pot1", "pot2"]
    a = compare_files(true_run, CSV, MAP).to_dict()
    b = compare_files(true_run, h5, MAP).to_dict()
    for ca, cb in zip(a["channels"], b["channels"]):
        # the time axis in ms differs from the CSV's by round-off, which the
        # sub-sample cross-correlation alignment carries into the metrics
        assert cb["nrmse"] == pytest.approx(ca["nrmse"], rel=1e-7)
    assert b["offset"] == pytest.approx(a["offset"], abs=1e-9)


def test_compare_command_writes_the_report(tmp_path, true_run):
    out = tmp_path / "report"
    r = flexmbs("compare", true_run, CSV, "--map", MAP, "-o", out, "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert [c["name"] for c in report["channels"]] == ["theta1", "theta2", "strain"]
    assert report["offset"] == pytest.approx(RELEASE, abs=1e-3)
    for name in ("report.md", "report.json", "overlay.png", "error.png", "spectrum.png"):
        assert (out / name).stat().st_size > 0
    md = (out / "report.md").read_text()
    assert "| theta2 |" in md and "Spectral peaks" in md
    assert json.loads((out / "report.json").read_text()) == report


# ------------------------------------------------------------------ identification
def test_fit_recovers_stiffness_damping_and_alpha(tmp_path):
    """From 50 % off, `flexmbs fit` on the first 3 s after the release recovers joint
    2's spring and damper and the beam's alpha within two standard deviations, and
    the record determines each to better than 10 %; the residuals are then the noise
    (s^2 within 4 sd of 1: sd = sqrt(2 / n_eff) with n_eff the residual count, the
    filtered channel counted by its gain g); the fitted model file carries the values."""
    out = tmp_path / "fit"
    start = {"joints.joint2.stiffness": 0.15, "joints.joint2.damping": 0.049,
             "bodies.link2.alpha": 0.000375}
    args = ["fit", RIG, CSV, "--map", MAP, "--t-end", 3.0, "-o", out, "--json", "-q",
            "--no-plots", "--serial"]
    for path, value in start.items():
        args += ["--param", path, "--set", f"{path}={value}"]
    r = flexmbs(*args)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    fit = report["fit"]
    values = {v["path"]: v for v in fit["values"]}
    for path, truth in TRUE.items():
        v = values[path]
        assert v["start"] == pytest.approx(start[path])
        assert abs(v["value"] - truth) < 2 * v["std"], (path, v)
        assert v["std"] < 0.1 * truth
    assert abs(values["offset"]["value"] - RELEASE) < 2 * values["offset"]["std"]
    n_eff = sum(fit["samples"][c] * fit["noise_power_gain"][c] for c in fit["samples"])
    assert fit["variance_ratio"] == pytest.approx(1.0, abs=4 * math.sqrt(2 / n_eff))
    corr = np.array(fit["correlation"]["matrix"])
    assert np.allclose(np.diag(corr), 1.0) and np.allclose(corr, corr.T)
    fitted = load_model(out / "huang_rig_fitted.toml")
    joint2 = fitted.joints["joint2"]
    assert float(np.ravel(joint2.stiffness)[0]) == pytest.approx(
        values["joints.joint2.stiffness"]["value"], rel=1e-12)
    assert fitted.bodies["link2"].alpha == pytest.approx(
        values["bodies.link2.alpha"]["value"], rel=1e-12)
    text = (out / "huang_rig_fitted.toml").read_text()
    assert text.startswith("# Fitted by flexmbs") and "# s, structural damping" in text
    assert open_result(out / "huang_rig_fitted.h5").status == "finished"
    assert (out / "report.md").exists() and (out / "fit.md").exists()


def test_set_toml_values_keeps_the_text():
    text = ('# head\n[a]\nx = 1.0  # keep me\n\n[a.b]\n"-1" = 2.0\ny = "s # t"\n'
            '[c]\nz = [1, 2]\n')
    out = set_toml_values(text, {"a.x": 3.5, "a.b.-1": 0.25, "a.b.w": 7, "c.z": [3]})
    assert "x = 3.5  # keep me" in out and out.startswith("# head")
    import tomllib
    assert tomllib.loads(out) == {"a": {"x": 3.5, "b": {"-1": 0.25, "y": "s # t", "w": 7}},
                                  "c": {"z": [3]}}
    inline = 'a = {x = 1.0}\n'
    assert tomllib.loads(set_toml_values(inline, {"a.x": 2.0})) == {"a": {"x": 2.0}}


# ------------------------------------------------------------------ bad input
def _csv(tmp_path, text, name="bad.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


GOOD_HEAD = "# a test record\ntime [s],pot1 [V],pot2 [V],bridge [V]\n"


def _rows(n=40, gap=None):
    lines = []
    for k in range(n):
        v2 = "" if gap and gap[0] <= k <= gap[1] else f"{1.5 + 0.001 * k:.4f}"
        lines.append(f"{k * 0.005:.3f},1.27,{v2},0.0025")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("text, fragments", [
    ("t [s],pot1 [V]\n0,1\n", ["line 1", 'no time column "time"', "columns: t, pot1"]),
    ("time,pot1 [V]\n0,1\n", ["line 1", 'field "time"', "expected the time unit"]),
    ("time [sec],pot1 [V]\n0,1\n", ['field "time"', 'got "sec"']),
    (GOOD_HEAD + "0.000,1,1,1\n0.005,1,1,1\n0.005,1,1,1\n",
     ["line 5", 'field "time"', "strictly increasing", "0.005", "(line 4)"]),
    (GOOD_HEAD + "0.000,1,1,1\n0.010,1,1,1\n0.005,1,1,1\n",
     ["line 5", "0.005 is not after the previous sample's 0.01"]),
    (GOOD_HEAD + "0.000,1,1,1\n0.005,1,1\n", ["line 4", "expected 4 values", "got 3"]),
    (GOOD_HEAD + "0.000,1,abc,1\n",
     ["line 3", 'field "pot2"', 'expected a number, got "abc"']),
    (GOOD_HEAD + ",1,1,1\n", ["line 3", 'field "time"', "expected a time value"]),
    (GOOD_HEAD + "0.000,1,inf,1\n", ["line 3", 'field "pot2"', "finite"]),
    ("# only comments\n", ["no header row"]),
    (GOOD_HEAD, ["no data rows after the header (line 2)"]),
    ("time [s],a [V],a [V]\n0,1,1\n", ['two columns are called "a"']),
])
def test_bad_csv_files(tmp_path, text, fragments):
    p = _csv(tmp_path, text)
    with pytest.raises(ExperimentError) as err:
        read_experiment(p)
    message = str(err.value)
    assert message.startswith(f"{p}: ")
    for fragment in fragments:
        assert fragment in message, message


def test_gaps_error_interpolate_or_cut(tmp_path, channel_map):
    p = _csv(tmp_path, GOOD_HEAD + _rows(40, gap=(10, 14)))
    exp = read_experiment(p)
    with pytest.raises(ExperimentError) as err:
        measured_signals(channel_map, exp)
    message = str(err.value)
    for fragment in (str(p), "lines 13-17", 'field "pot2"', "5 missing values",
                     "t = 0.05 to 0.07 s", '"interpolate" or "cut"'):
        assert fragment in message, message
    filled, gaps, note = resolve_gaps(exp, ["pot2"], "interpolate")
    assert len(gaps) == 1 and "interpolated" in note
    assert filled.channels["pot2"] == pytest.approx(1.5 + 0.001 * np.arange(40))  # linear
    cut, _, note = resolve_gaps(exp, ["pot2"], "cut")
    assert cut.nsamples == 25 and cut.time[0] == pytest.approx(0.075)
    assert "cut to the longest stretch" in note
    ends = read_experiment(_csv(tmp_path, GOOD_HEAD + _rows(40, gap=(0, 2)), "ends.csv"))
    filled, _, note = resolve_gaps(ends, ["pot2"], "interpolate")
    assert filled.nsamples == 37 and "cut" in note
    m = measured_signals(channel_map, exp, gaps="interpolate")
    assert "interpolated" in m.notes[0]


def test_bad_hdf5_files(tmp_path):
    p = tmp_path / "two.h5"
    with h5py.File(p, "w") as f:
        for g in ("a", "b"):
            f.create_dataset(f"{g}/time", data=[0.0, 1.0]).attrs["unit"] = "s"
    with pytest.raises(ExperimentError, match="several groups hold a \"time\" dataset "
                                              r"\(/a, /b\)"):
        read_experiment(p)
    assert read_experiment(p, group="b").group == "/b"
    p = tmp_path / "none.h5"
    with h5py.File(p, "w") as f:
        f.create_dataset("x", data=[1.0])
    with pytest.raises(ExperimentError, match="no group holds a dataset \"time\""):
        read_experiment(p)
    p = tmp_path / "back.h5"
    with h5py.File(p, "w") as f:
        f.create_dataset("g/time", data=[0.0, 0.2, 0.1]).attrs["unit"] = "s"
    with pytest.raises(ExperimentError) as err:
        read_experiment(p)
    assert 'dataset "/g/time": sample 2: field "time": expected strictly increasing' in \
        str(err.value)
    p = tmp_path / "nounit.h5"
    with h5py.File(p, "w") as f:
        f.create_dataset("time", data=[0.0, 0.1])
    with pytest.raises(ExperimentError, match="expected the time unit"):
        read_experiment(p)


MAP_BASE = """
[channels.theta2]
sensor = "theta2"
experiment = "pot2"
gain = 115.0
offset = 1.26
unit = "deg"
"""


@pytest.mark.parametrize("text, fragments", [
    ("[channel.x]\n", ['section "channel"', "unknown section"]),
    ("[experiment]\n", ["expected at least one [channels.NAME] table"]),
    (MAP_BASE + "gian = 1.0\n", ['channel "theta2"', 'field "gian"', "allowed fields"]),
    (MAP_BASE.replace('experiment = "pot2"\n', ""), ['field "experiment"', "missing"]),
    (MAP_BASE.replace("gain = 115.0", "gain = 0"), ['field "gain"', "non-zero"]),
    (MAP_BASE + "sign = 2\n", ['field "sign"', "expected 1 or -1, got 2"]),
    (MAP_BASE.replace('"deg"', '"degree"'), ['field "unit"', 'unknown unit "degree"']),
    (MAP_BASE.replace("115.0", '"115"'), ['field "gain"', 'expected a number, got "115"']),
    (MAP_BASE + "lowpass = -5.0\n", ['field "lowpass"', "positive cutoff"]),
    (MAP_BASE + "lowpass_order = 4\n", ['field "lowpass_order"', "without a lowpass"]),
    (MAP_BASE + '[alignment]\nmethod = "lag"\n', ['section "alignment"', 'field "method"',
                                                   "offset, release, xcorr"]),
    (MAP_BASE + '[alignment]\nmethod = "xcorr"\n', ['field "channel"', "missing"]),
    (MAP_BASE + '[alignment]\nmethod = "xcorr"\nchannel = "theta3"\n',
     ['field "channel"', "expected a channel of the map (theta2)"]),
    (MAP_BASE + '[alignment]\nmethod = "offset"\nchannel = "theta2"\n',
     ['field "channel"', 'not used by method "offset"']),
    (MAP_BASE + '[alignment]\nmethod = "xcorr"\nchannel = "theta2"\nsearch = [2, 1]\n',
     ['field "search"', "lo < hi"]),
    (MAP_BASE + '[experiment]\ngaps = "fill"\n', ['field "gaps"', "error, interpolate, cut"]),
    ("[channels\n", ["not valid TOML"]),
])
def test_bad_maps(text, fragments):
    with pytest.raises(ExperimentError) as err:
        loads_channel_map(text, "rig.map.toml")
    message = str(err.value)
    assert message.startswith("rig.map.toml: ")
    for fragment in fragments:
        assert fragment in message, message


def test_maps_that_do_not_fit_the_files(tmp_path, true_run):
    exp = read_experiment(CSV)
    m = loads_channel_map(MAP_BASE.replace('"pot2"', '"V2"'), "m.toml")
    with pytest.raises(ExperimentError, match='m.toml: channel "theta2": field '
                       '"experiment": .* no channel "V2" .*its channels: pot1, pot2, bridge'):
        measured_signals(m, exp)
    m = loads_channel_map(MAP_BASE + 'raw_unit = "mV"\n', "m.toml")
    with pytest.raises(ExperimentError, match='field "raw_unit": .*gives "pot2" in "V": '
                                              'expected "mV"'):
        measured_signals(m, exp)
    m = loads_channel_map(MAP_BASE + "lowpass = 150.0\n", "m.toml")
    with pytest.raises(ExperimentError, match='field "lowpass": expected a cutoff below the '
                                              "Nyquist frequency 100 Hz"):
        measured_signals(m, exp)
    r = open_result(true_run)
    q = cmap_mod.sensor_quantities(r.model_json)
    assert q == {"theta1": "angle", "theta2": "angle", "strain": "dimensionless",
                 "tip": "length", "tip_deflection": "length"}
    cases = [
        (MAP_BASE.replace('sensor = "theta2"', 'sensor = "theta"'),
         'field "sensor": the result file .* has no sensor "theta"; its sensors: theta1, '
         "theta2, strain, tip, tip_deflection"),
        (MAP_BASE.replace('sensor = "theta2"', 'sensor = "strain"'),
         'field "unit": "deg" is an angle unit, but sensor "strain" gives a dimensionless '
         'value'),
        (MAP_BASE.replace('sensor = "theta2"', 'sensor = "tip"').replace('"deg"', '"mm"'),
         'field "component": sensor "tip" has 3 values \\(x, y, z\\)'),
        (MAP_BASE.replace('sensor = "theta2"', 'sensor = "tip"\ncomponent = "w"')
         .replace('"deg"', '"mm"'), 'field "component": expected one of x, y, z, got "w"'),
        (MAP_BASE + "component = 1\n", 'field "component": sensor "theta2" has one value'),
    ]
    for text, pattern in cases:
        with pytest.raises(ExperimentError, match=pattern):
            simulated_signals(r.time, r.sensors, q, loads_channel_map(text, "m.toml"), r.path)
    m = loads_channel_map(MAP_BASE.replace('sensor = "theta2"', 'sensor = "tip"\n'
                                           'component = "z"').replace('"deg"', '"mm"'), "m")
    sim = simulated_signals(r.time, r.sensors, q, m, r.path)
    assert sim.values["theta2"] == pytest.approx(r.sensors["tip"][:, 2])


@pytest.mark.parametrize("text, fragment", [
    ("joints.joint2.stifness", 'no value "stifness" in joints.joint2'),
    ("joints.joint2.axis", "expected a number to fit, got a list"),
    ("joints.joint2.damping=1:0", "expected lo < hi"),
    ("joints.joint2.damping=a:b", "expected numbers"),
    ("joints.joint2.damping=0.5:1", "the starting value 0.098 is outside the bounds"),
])
def test_bad_fit_parameters(text, fragment, channel_map):
    from flexmbs.analysis.fit import fit_model
    with pytest.raises(ModelError) as err:
        fit_model(RIG, read_experiment(CSV), channel_map, [parse_parameter(text)])
    assert fragment in str(err.value), str(err.value)
    assert '--param "joints.joint2.' in str(err.value)


def test_bad_input_on_the_command_line(tmp_path, true_run, capsys):
    """One line naming the file, exit status 2, no traceback."""
    bad = _csv(tmp_path, GOOD_HEAD + "0.000,1,1,1\n0.000,1,1,1\n")
    cases = [
        (["compare", true_run, bad, "--map", MAP], f"{bad}: line 4: field \"time\""),
        (["compare", true_run, CSV, "--map", tmp_path / "none.toml"], "no such channel map"),
        (["compare", true_run, tmp_path / "none.csv", "--map", MAP],
         "no such experiment file"),
        (["fit", RIG, CSV, "--map", MAP, "--param", "joints.joint9.damping"],
         'huang_rig.toml: --param "joints.joint9.damping": no value "joint9"'),
    ]
    for args, fragment in cases:
        r = flexmbs_here(capsys, *args)
        assert r.returncode == 2, r.stderr
        assert r.stderr.startswith("flexmbs: error: ") and fragment in r.stderr, r.stderr
        assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


def test_fit_help_states_the_defaults(capsys):
    """The command line keeps the fit's modules unloaded until `fit` runs, so its help
    spells the defaults out: they must be the module's."""
    from flexmbs.analysis.fit import DEFAULT_MAX_RUNS
    from flexmbs.cli import main
    with pytest.raises(SystemExit):
        main(["fit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    import re
    runs = re.search(r"default (\S+): flexmbs.analysis.fit.DEFAULT_MAX_RUNS", text).group(1)
    assert int(runs) == DEFAULT_MAX_RUNS
    assert "default: the model's, ten times tighter at a step until the convergence" in text


def test_a_fit_on_a_flat_record_is_refused_as_such(tmp_path, channel_map):
    """A record whose channels never move has no motion to fit: refused naming the
    file and the values held, before any run."""
    from flexmbs.analysis.fit import fit_model

    head = "".join(line for line in CSV.read_text().splitlines(keepends=True)
                   if line.startswith(("#", "time")))
    rows = "".join(f"{0.005 * k:.3f},1.27,1.26,0.0000026\n" for k in range(400))
    flat = tmp_path / "flat.csv"
    flat.write_text(head + rows)
    with pytest.raises(ExperimentError) as err:
        fit_model(RIG, read_experiment(flat), channel_map,
                  [parse_parameter("joints.joint2.damping")])
    text = str(err.value)
    assert text.startswith(str(flat)) and "flat" in text and '"theta2" = 0' in text, text

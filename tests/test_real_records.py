"""compare and fit on records as a rig gives them: the alignment over the whole
record on step and square-wave responses (the lag found where it is, also when a
shift by whole periods matches the middle of the record), the lag of each compared
channel on a servo's step records at 1 kHz, quantized, and the measurement noise
stated in the map or estimated from a quantized record."""

import math

import numpy as np
import pytest
import scipy.linalg
from scipy.interpolate import CubicSpline

from flexmbs.analysis.channel_map import (
    MeasuredSignals,
    SimulatedSignals,
    cross_correlation_offset,
    held_correlations,
    loads_channel_map,
    measurement_noise,
    record_quantum,
)
from flexmbs.analysis.compare import compare_signals, edge_correlation, time_lag
from flexmbs.analysis.record_alignment import _grid_overlap
from flexmbs.errors import ExperimentError

MAP = """
[alignment]
method = "xcorr"
channel = "angle"

[channels.angle]
experiment = "enc"
"""


def _first_order(t, u, tau=0.05):
    """y of tau y' = u - y, y(0) = 0, for u sampled on t (exact for u held)."""
    y = np.zeros_like(t)
    for k in range(1, len(t)):
        a = math.exp(-(t[k] - t[k - 1]) / tau)
        y[k] = a * y[k - 1] + (1 - a) * u[k - 1]
    return y


def _square(t, period, start):
    return np.where(t < start, 0.0, np.where(((t - start) // (period / 2)) % 2 == 0, 1.0, -1.0))


def _signals(response, t_sim, lag, dt=1e-3, noise=0.0, seed=0):
    """The run (response on t_sim) and a record of it, t_exp = t_sim + lag, over the
    run's span, with white noise."""
    sim = SimulatedSignals(time=t_sim, values={"angle": response})
    t_exp = np.arange(0.0, t_sim[-1], dt)
    rec = np.interp(t_exp - lag, t_sim, response, left=response[0], right=response[-1])
    rec = rec + noise * np.random.default_rng(seed).normal(size=len(t_exp))
    measured = MeasuredSignals(time=t_exp, values={"angle": rec}, sample_interval=dt,
                               notes=[], experiment=None)
    return measured, sim


@pytest.mark.parametrize("lag", [-0.01, 0.0, 0.037])
def test_alignment_of_a_square_wave_record(lag):
    """A square wave of period 0.4 s over 4 s: a shift by whole periods matches the
    holds between the steps as well as the true lag does on the part they overlap;
    over the whole record only the true lag explains the ends."""
    t = np.arange(0.0, 4.0 + 1e-9, 5e-4)
    response = _first_order(t, _square(t, 0.4, 0.2))
    measured, sim = _signals(response, t, lag, noise=0.01)
    offset, text = cross_correlation_offset(loads_channel_map(MAP), measured, sim)
    assert abs(offset - lag) < 2e-4, text


@pytest.mark.parametrize("lag", [-0.02, 0.015])
def test_alignment_of_a_step_record(lag):
    t = np.arange(0.0, 2.0 + 1e-9, 5e-4)
    response = _first_order(t, np.where(t >= 0.5, 1.0, 0.0))
    measured, sim = _signals(response, t, lag, noise=0.005)
    offset, text = cross_correlation_offset(loads_channel_map(MAP), measured, sim)
    assert abs(offset - lag) < 2e-4, text


def test_noise_stated_in_the_map_in_its_unit():
    cmap = loads_channel_map(MAP.replace('experiment = "enc"',
                                         'experiment = "enc"\nunit = "mrad"\nnoise = 0.5'))
    sigma, how = measurement_noise(cmap.channels[0], np.zeros(100))
    assert sigma == pytest.approx(0.5e-3)
    assert "stated" in how
    with pytest.raises(ExperimentError, match="noise"):
        loads_channel_map(MAP.replace('experiment = "enc"', 'experiment = "enc"\nnoise = 0'))


@pytest.mark.parametrize("sigma_over_q, source", [(0.0, "quantization"),
                                                  (0.05, "quantization"),
                                                  (0.2, "third differences"),
                                                  (1.0, "third differences")])
def test_noise_of_a_quantized_record(sigma_over_q, source):
    """A smooth signal printed to a step q (an encoder, a print to 1 mrad) with
    noise: the standard deviation of what the record holds, within 10 %; with
    little noise, the rounding's q / sqrt(12)."""
    q = 1e-3
    t = np.arange(0.0, 5.0, 1e-3)
    smooth = 0.3 * np.sin(2 * np.pi * 0.7 * t) + 0.05 * t
    rng = np.random.default_rng(1)
    rec = q * np.round((smooth + sigma_over_q * q * rng.normal(size=len(t))) / q)
    assert record_quantum(rec) == pytest.approx(q)
    sigma, how = measurement_noise(loads_channel_map(MAP).channels[0], rec)
    actual = np.std(rec - smooth)
    assert sigma == pytest.approx(actual, rel=0.1)
    assert source in how


def test_slow_quantized_record():
    """A record that moves less than a step per sample: most third differences are
    0 (the rounding is not white); the noise is the rounding's, q / sqrt(12)."""
    q = 1e-3
    t = np.arange(0.0, 5.0, 1e-3)
    rec = q * np.round(0.01 * np.sin(2 * np.pi * 0.2 * t) / q)
    sigma, how = measurement_noise(loads_channel_map(MAP).channels[0], rec)
    assert sigma == pytest.approx(q / math.sqrt(12))
    assert "quantization" in how


def test_noise_above_the_quantum_from_third_differences():
    q = 1e-4
    t = np.arange(0.0, 5.0, 1e-3)
    smooth = 0.3 * np.sin(2 * np.pi * 0.7 * t)
    rng = np.random.default_rng(2)
    rec = q * np.round((smooth + 2e-3 * rng.normal(size=len(t))) / q)
    sigma, how = measurement_noise(loads_channel_map(MAP).channels[0], rec)
    assert sigma == pytest.approx(math.sqrt(2e-3 ** 2 + q ** 2 / 12), rel=0.08)
    assert "third differences" in how


@pytest.mark.parametrize("run_end", [1.5, 2.6])
def test_alignment_of_a_run_shorter_than_the_record(run_end):
    """The square-wave record of 4 s against a run of its first 1.5 or 2.6 s: the
    record past the run's end is left out, not compared with the run's last value."""
    t = np.arange(0.0, 4.0 + 1e-9, 5e-4)
    response = _first_order(t, _square(t, 0.4, 0.2))
    measured, sim = _signals(response, t, 0.023, noise=0.01)
    short = t <= run_end
    sim = SimulatedSignals(time=t[short], values={"angle": response[short]})
    offset, text = cross_correlation_offset(loads_channel_map(MAP), measured, sim)
    assert abs(offset - 0.023) < 2e-4, text


# ------------------------------------------------- the lag of each compared channel
FINE = 2.5e-4  # s: the grid the servo's response is computed on (exact for a held reference)
RECORD_DT = 1e-3  # s: a rig's 1 kHz acquisition


def _servo_response(t_end, every, delay, zeta_hub=0.45, start=0.5):
    """(t, hub angle rad, tip deflection m, reference rad) on the FINE grid of a servo
    under a square-wave reference of 0.1 rad switching every `every` s from `start` +
    `delay` s: the hub follows as a second-order loop (1.2 Hz, damping `zeta_hub`) and
    carries a link ringing at 1.8 Hz with damping 0.005, driven by the hub's
    acceleration and pulling on the hub,

        th'' = wh^2 (r - th) - 2 zh wh th' + 3 w,   w'' = -wl^2 w - 2 zl wl w' - 0.1 th'',

    stepped exactly (the matrix exponential of the linear system, the reference held
    between the grid's points, its switches on them)."""
    wh, zh, wl, zl = 2 * math.pi * 1.2, zeta_hub, 2 * math.pi * 1.8, 0.005
    hub = np.array([[0, 1, 0, 0], [-wh**2, -2 * zh * wh, 3.0, 0]])
    a = np.vstack([hub[0], hub[1], [0, 0, 0, 1], -0.1 * hub[1] + [0, 0, -wl**2, -2 * zl * wl]])
    b = np.array([0.0, wh**2, 0.0, -0.1 * wh**2])
    m = scipy.linalg.expm(np.block([[a, b[:, None]], [np.zeros((1, 5))]]) * FINE)
    ad, bd = m[:4, :4], m[:4, 4]
    t = FINE * np.arange(int(round(t_end / FINE)) + 1)
    k = np.floor((t - start - delay) / every + 1e-9)
    ref = np.where(t < start + delay - 1e-9, 0.0, np.where(k % 2 == 0, 0.1, -0.1))
    x = np.zeros((len(t), 4))
    for i in range(1, len(t)):
        x[i] = ad @ x[i - 1] + bd * ref[i - 1]
    return t, x[:, 0], x[:, 2], ref


def _rig_record(t_end, every, delay, zeta_model=0.45, seed=0):
    """A run of the servo (outputs every 0.5 ms) and a record of the rig whose steps
    come `delay` s later, at 1 kHz: the hub angle with 0.2 mrad of noise printed to
    1 mrad, the tip deflection with 0.2 mm printed to 1 mm, the reference as set."""
    t, hub, tip, ref = _servo_response(t_end, every, delay)
    _, hub_m, tip_m, ref_m = _servo_response(t_end, every, 0.0, zeta_hub=zeta_model)
    rng = np.random.default_rng(seed)
    rec = slice(None, None, int(round(RECORD_DT / FINE)))
    hub_rec = 1e-3 * np.round((hub[rec] + 2e-4 * rng.normal(size=len(t[rec]))) / 1e-3)
    tip_rec = 1e-3 * np.round((tip[rec] + 2e-4 * rng.normal(size=len(t[rec]))) / 1e-3)
    measured = MeasuredSignals(time=t[rec], values={"hub": hub_rec, "tip": tip_rec,
                                                    "ref": ref[rec]},
                               sample_interval=RECORD_DT, notes=[], experiment=None)
    out = slice(None, None, 2)
    sim = SimulatedSignals(time=t[out], values={"hub": hub_m[out], "tip": tip_m[out],
                                                "ref": ref_m[out]})
    return measured, sim


RIG_MAP = """
[alignment]
method = "offset"
offset = 0.0
{extra}
[channels.hub]
experiment = "hub"
unit = "rad"

[channels.tip]
experiment = "tip"

[channels.ref]
experiment = "ref"
"""


@pytest.mark.parametrize("every, t_end, delay", [(2.5, 6.9, 0.00325), (5.0, 6.9, 0.0045),
                                                 (2.5, 3.0, -0.002), (5.0, 12.0, 0.00575)])
def test_lag_of_step_records(every, t_end, delay):
    """Steps every 2.5 s and 5 s, over records of 3 to 12 s quantized to 1 mrad and
    1 mm: the lag of every channel, the reference's too, within a sample of the
    truth (the simulation leads the record by `delay`: its lag is -delay)."""
    measured, sim = _rig_record(t_end, every, delay)
    c = compare_signals(loads_channel_map(RIG_MAP.format(extra="")), measured, sim)
    for ch in c.channels:
        assert abs(ch.lag + delay) < RECORD_DT, (ch.name, ch.lag, ch.max_lag)
        assert ch.correlation > 0.97


@pytest.mark.parametrize("every", [2.5, 5.0])
def test_lag_of_a_model_that_damps_more_than_the_rig(every):
    """The model's hub too damped (0.55 against 0.45: a smaller overshoot), as a model
    before its fit: the edges still put the hub's lag within a sample of the record's
    (the correlation of the levels trades the shapes' difference for a shift)."""
    measured, sim = _rig_record(6.9, every, 0.004, zeta_model=0.55)
    c = compare_signals(loads_channel_map(RIG_MAP.format(extra="")), measured, sim)
    assert abs(c.channel("hub").lag + 0.004) < RECORD_DT, c.channel("hub")
    assert abs(c.channel("ref").lag + 0.004) < RECORD_DT, c.channel("ref")


def test_lag_of_a_square_wave_searched_over_several_periods():
    """A search range of several periods (the map's max_lag 1 s, a period 0.4 s): the
    repeats of the square wave correlate nearly as well as the true lag; the smallest
    |lag| among them is taken."""
    t = np.arange(0.0, 4.0 + 1e-9, 5e-4)
    response = _first_order(t, _square(t, 0.4, 0.2), tau=0.01)
    measured, sim = _signals(response, t, 0.0035, noise=0.002)
    cmap = loads_channel_map(MAP.replace('method = "xcorr"\nchannel = "angle"',
                                         "max_lag = 1.0"))
    assert cmap.alignment.method == "offset" and cmap.alignment.max_lag == 1.0
    c = compare_signals(cmap, measured, sim, offset=0.0)
    assert c.channel("angle").max_lag == 1.0
    assert abs(c.channel("angle").lag + 0.0035) < 1e-3, c.channel("angle")
    rho = edge_correlation(np.diff(measured.values["angle"]),
                           np.diff(sim.at("angle", measured.time)), 1000)
    repeat = rho[1000 - 4 + 800]  # a shift of two periods
    assert repeat > 0.9 * rho.max()


def test_max_lag_bounds_the_search():
    measured, sim = _rig_record(6.9, 2.5, 0.004)
    c = compare_signals(loads_channel_map(RIG_MAP.format(extra="max_lag = 0.002")),
                        measured, sim)
    for ch in c.channels:
        assert ch.max_lag == 0.002 and abs(ch.lag) <= 0.002 + 1e-12
    with pytest.raises(ExperimentError, match='section "alignment": field "max_lag": '
                                              "expected a positive number, got 0"):
        loads_channel_map(RIG_MAP.format(extra="max_lag = 0"), "m.toml")


def test_lag_of_a_constant_channel_is_zero():
    x = np.zeros(500)
    assert time_lag(x, x + 1.0, 1e-3, 0.05) == 0.0


def _held_correlation_by_definition(x, t, offset, run, t0_sim, t1_sim):
    """The correlation at one offset as cross_correlation_offset defines it: the record
    against the run at t - offset, the run held at its first value before it starts,
    the record's samples after the run's end left out, the record's first value held
    against the run's samples before the record's first."""
    dt = t[1] - t[0]
    ts = t - offset
    covered = ts <= t1_sim + 1e-9 * dt  # a sample on the run's end is inside
    record, sim = x[covered], run(np.maximum(ts[covered], t0_sim))
    before = int(np.floor((ts[0] - t0_sim) / dt + 1e-9))
    if before > 0:
        record = np.concatenate([np.full(before, x[0]), record])
        sim = np.concatenate([run(ts[0] - dt * np.arange(before, 0, -1)), sim])
    if len(record) < 2 or np.ptp(record) == 0 or np.ptp(sim) == 0:
        return 0.0
    return float(np.corrcoef(record, sim)[0, 1])


@pytest.mark.parametrize("lo, count, t0_sim, t1_sim", [(-1.0, 2001, 0.0, 2.0),
                                                       (-0.3, 700, 0.0, 0.8),
                                                       (0.2, 500, 0.0, 3.5)])
def test_held_correlations_at_every_offset_by_fft(lo, count, t0_sim, t1_sim):
    """The correlations of every offset at once (cumulative sums and one FFT) against
    the definition, one offset at a time, where the run and the record overlap."""
    t = 0.1 + 2e-3 * np.arange(1000)
    rng = np.random.default_rng(3)
    ts = np.linspace(t0_sim, t1_sim, 400)
    run = CubicSpline(ts, np.sin(3 * ts) + 0.3 * ts ** 2)
    x = np.sin(3 * (t - 0.05)) + 0.3 * (t - 0.05) ** 2 + 0.05 * rng.normal(size=len(t))
    fast = held_correlations(x, t[0], 2e-3, lo, count, run, t0_sim, t1_sim)
    covered = _grid_overlap(len(t), t[0], 2e-3, lo, count, t0_sim, t1_sim)
    for j in range(0, count, 7):
        if covered[j] < 20:
            continue
        want = _held_correlation_by_definition(x, t, lo + j * 2e-3, run, t0_sim, t1_sim)
        assert fast[j] == pytest.approx(want, abs=1e-9), j


def test_alignment_of_a_long_record_at_1_khz_takes_seconds():
    """12 s at 1 kHz over offsets of +-6 s: 12 001 offsets, each over the whole record."""
    import time

    measured, sim = _rig_record(12.0, 2.5, 0.0)
    cmap = loads_channel_map(RIG_MAP.format(extra="").replace(
        'method = "offset"\noffset = 0.0', 'method = "xcorr"\nchannel = "hub"'))
    start = time.perf_counter()
    offset, text = cross_correlation_offset(cmap, measured, sim)
    assert time.perf_counter() - start < 10.0
    assert abs(offset) < RECORD_DT, text


@pytest.mark.parametrize("every, t_end, delay", [(2.5, 6.9, 0.00325), (5.0, 6.9, -0.0045),
                                                 (5.0, 12.0, 0.00575)])
@pytest.mark.parametrize("channel", ["hub", "tip", "ref"])
def test_alignment_of_step_records_at_1_khz(every, t_end, delay, channel):
    """The cross-correlation alignment on the servo's quantized records, on the hub,
    the tip or the recorded reference: the record's steps `delay` s after the run's,
    found within a sample."""
    measured, sim = _rig_record(t_end, every, delay)
    cmap = loads_channel_map(RIG_MAP.format(extra="").replace(
        'method = "offset"\noffset = 0.0', f'method = "xcorr"\nchannel = "{channel}"'))
    offset, text = cross_correlation_offset(cmap, measured, sim)
    assert abs(offset - delay) < RECORD_DT, text

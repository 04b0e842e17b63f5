"""compare and fit on records as a rig gives them: the alignment over the whole
record on step and square-wave responses (the lag found where it is, also when a
shift by whole periods matches the middle of the record), and the measurement noise
stated in the map or estimated from a quantized record."""

import math

import numpy as np
import pytest

from flexmbs.analysis.channel_map import (
    MeasuredSignals,
    SimulatedSignals,
    cross_correlation_offset,
    loads_channel_map,
    measurement_noise,
    record_quantum,
)
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

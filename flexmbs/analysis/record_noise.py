"""A record's filtering and noise: the zero-phase low-pass of a channel, its noise
power gain, and the standard deviation of a channel's measurement noise, from the map
or from the record (third differences, quantization).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.signal import butter, sosfiltfilt

from .channel_map_items import DEFAULT_LOWPASS_ORDER

if TYPE_CHECKING:
    from .channel_map_items import MappedChannel


IMPULSE_DECAY_PERIODS = 200  # noise_power_gain: impulse-response length in 1/cutoff


def lowpass_filter(
    values: ArrayLike, sample_interval: float, cutoff: float, order: int = DEFAULT_LOWPASS_ORDER
) -> NDArray[np.float64]:
    """Zero-phase low-pass: a Butterworth filter of `order` and `cutoff` (Hz) run
    forward and backward (scipy.signal.sosfiltfilt) over uniformly sampled `values`.
    The magnitude response is |H(f)|^2 = 1 / (1 + (f / cutoff)^(2 order)), no phase."""
    sos = butter(order, cutoff, fs=1.0 / sample_interval, output="sos")
    return sosfiltfilt(sos, np.asarray(values, dtype=float))


def noise_power_gain(
    sample_interval: float, cutoff: float | None, order: int = DEFAULT_LOWPASS_ORDER
) -> float:
    """g = sum_k h_k^2 of the zero-phase filter's impulse response h: white noise of
    variance s^2 leaves it with variance g s^2 (g = 1 without a filter)."""
    if cutoff is None:
        return 1.0
    n = int(IMPULSE_DECAY_PERIODS / (cutoff * sample_interval)) * 2 + 1
    impulse = np.zeros(n)
    impulse[n // 2] = 1.0
    h = lowpass_filter(impulse, sample_interval, cutoff, order)
    return float(np.sum(h * h))


def filtered(
    channel: MappedChannel, values: ArrayLike, sample_interval: float
) -> NDArray[np.float64]:
    """The channel's low-pass filter applied to `values` (unchanged without one)."""
    if channel.lowpass is None:
        return np.asarray(values, dtype=float)
    return lowpass_filter(values, sample_interval, channel.lowpass, channel.lowpass_order)


MAD_TO_SD = 1.4826  # standard deviation / median absolute deviation, normal noise
D3_VARIANCE = 20.0  # var(D^3 w) / var(w) for white noise w
QUANTUM_RTOL = 1e-6  # of the step: a record's differences are whole steps within this
QUANTUM_MIN_LEVELS = 4  # a record on fewer distinct steps than this is not read as quantized
TRIM_MADS = 5.0  # third differences farther than this many robust deviations: the signal's


def third_difference_noise(values: ArrayLike) -> float:
    """sigma of white measurement noise on a finely sampled smooth signal, from its
    third differences D^3 x (a smooth signal has negligible ones; white noise of any
    distribution has var D^3 = 20 sigma^2): the standard deviation of D^3 over the
    samples within TRIM_MADS robust deviations of its median (1.4826 times the
    median absolute deviation), so that the few large ones of the signal's own
    jumps do not count, over sqrt(20). 0 when most third differences are 0."""
    d3 = np.diff(np.asarray(values, dtype=float), 3)
    mid = np.median(d3)
    spread = MAD_TO_SD * float(np.median(np.abs(d3 - mid)))
    if not spread > 0:
        return 0.0
    inliers = d3[np.abs(d3 - mid) <= TRIM_MADS * spread]
    return float(np.std(inliers) / math.sqrt(D3_VARIANCE))


def record_quantum(values: ArrayLike) -> float | None:
    """The step q of a quantized record (an encoder's count, an ADC's or a printed
    resolution): every difference of consecutive samples a whole multiple of the
    smallest non-zero one, within QUANTUM_RTOL; None when the record is not so."""
    d = np.abs(np.diff(np.asarray(values, dtype=float)))
    scale = float(np.max(np.abs(values))) if len(d) else 0.0
    d = d[d > 1e-12 * max(scale, 1e-300)]
    if len(d) < QUANTUM_MIN_LEVELS:
        return None
    q = float(np.min(d))
    counts = d / q
    if np.max(np.abs(counts - np.round(counts))) > QUANTUM_RTOL * max(1.0, float(counts.max())):
        return None
    return q


def measurement_noise(channel: MappedChannel, values: ArrayLike) -> tuple[float, str]:
    """(sigma, how): the standard deviation (SI) of the channel's measurement noise.

    Stated in the map (`noise`, in `unit`): that. Else from the record: the third
    differences' robust estimate (`third_difference_noise`) and, on a quantized
    record (`record_quantum`, step q) at least the rounding's q / sqrt(12): below
    about q / 2 the noise hardly moves the rounded samples, and on a slow signal the
    rounding's errors are not white (most third differences are 0)."""
    if channel.noise is not None:
        sigma = channel.noise * channel.unit_factor
        return sigma, f"{sigma:.3g} as stated in the map"
    d3 = third_difference_noise(values)
    q = record_quantum(values)
    if q is not None and d3 < q / math.sqrt(12.0):
        sigma = q / math.sqrt(12.0)
        return sigma, f"{sigma:.3g} from the record's quantization (step {q:.3g}, q/sqrt(12))"
    return d3, f"{d3:.3g} from the record's third differences"

"""The dominant frequencies of a recorded signal: spectrum peaks, refined.

1. Spectrum: the signal less its linear trend, Hann window, zero-padded to
   ZERO_PADDING times its length; the `count` highest local maxima of the magnitude,
   each placed between its bins by a parabola through the log-magnitudes.
2. Refinement: a least-squares fit of
   x(t) = c0 + c1 t + sum_k exp(-sigma_k t) (a_k cos w_k t + b_k sin w_k t)
   started at those peaks (sigma_k = 0), amplitudes solved linearly for each trial of
   the (w_k, sigma_k) (variable projection). The fitted w_k / 2 pi are the damped
   frequencies (Hz), free of the bin width and of the leakage between close peaks;
   they compare with the damped frequencies Im(s) / 2 pi of a linearization.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.optimize
import scipy.signal
from numpy.typing import ArrayLike, NDArray

__all__ = ["SpectrumPeaks", "spectrum_peaks", "ZERO_PADDING"]

ZERO_PADDING = 16


@dataclass
class SpectrumPeaks:
    """Per peak, by height: the spectrum's peak frequency (Hz), the fitted damped
    frequency (Hz), decay rate sigma (1/s) and amplitude (the signal's unit)."""

    peak: np.ndarray
    frequency: np.ndarray
    decay: np.ndarray
    amplitude: np.ndarray


def _fft_peaks(t: NDArray[np.float64], x: NDArray[np.float64], count: int) -> NDArray[np.float64]:
    dt = (t[-1] - t[0]) / (len(t) - 1)
    x = scipy.signal.detrend(x) * np.hanning(len(x))
    n = ZERO_PADDING * len(x)
    mag = np.abs(np.fft.rfft(x, n))
    freq = np.fft.rfftfreq(n, dt)
    idx, props = scipy.signal.find_peaks(mag, distance=ZERO_PADDING)
    idx = idx[idx > 0]
    idx = idx[np.argsort(mag[idx])[::-1]][:count]
    out = []
    for i in idx:
        if i + 1 >= len(mag):
            out.append(freq[i])
            continue
        a, b, c = np.log(mag[i - 1 : i + 2] + 1e-300)
        shift = 0.5 * (a - c) / (a - 2 * b + c) if a - 2 * b + c != 0 else 0.0
        out.append(freq[i] + shift * (freq[1] - freq[0]))
    return np.array(out)


def _basis(t: NDArray[np.float64], params: NDArray[np.float64]) -> NDArray[np.float64]:
    cols = [np.ones_like(t), t - t[0]]
    s = t - t[0]
    for w, sigma in params.reshape(-1, 2):
        e = np.exp(-sigma * s)
        cols += [e * np.cos(w * s), e * np.sin(w * s)]
    return np.column_stack(cols)


def spectrum_peaks(t: ArrayLike, x: ArrayLike, count: int = 1) -> SpectrumPeaks:
    """SpectrumPeaks of the signal x(t) (uniform samples) for its `count` highest
    spectrum peaks (module docstring)."""
    t = np.asarray(t, dtype=float)
    x = np.asarray(x, dtype=float)
    peaks = _fft_peaks(t, x, count)
    start = np.column_stack([2 * np.pi * peaks, np.zeros(len(peaks))]).ravel()
    scale = np.abs(x - x.mean()).max() or 1.0

    def residual(p: NDArray[np.float64]) -> NDArray[np.float64]:
        a = _basis(t, p)
        coef = np.linalg.lstsq(a, x, rcond=None)[0]
        return (a @ coef - x) / scale

    fit = scipy.optimize.least_squares(
        residual, start, x_scale="jac", xtol=1e-14, ftol=1e-14, gtol=1e-14
    )
    params = fit.x.reshape(-1, 2)
    coef = np.linalg.lstsq(_basis(t, fit.x), x, rcond=None)[0][2:].reshape(-1, 2)
    return SpectrumPeaks(
        peaks, np.abs(params[:, 0]) / (2 * np.pi), params[:, 1], np.hypot(coef[:, 0], coef[:, 1])
    )

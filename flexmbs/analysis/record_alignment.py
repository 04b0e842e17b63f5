"""Where a run's t = 0 lies in a record's time, equation (2) of
flexmbs.analysis.channel_map: given, from the release seen in a channel, or the lag of
the largest cross-correlation of a channel of the record and of the run.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import minimize_scalar
from scipy.signal import correlate

from ..errors import ExperimentError

if TYPE_CHECKING:
    from .channel_map_items import ChannelMap
    from .mapped_signals import MeasuredSignals, SimulatedSignals


RELEASE_NOISE_MULTIPLE = 10.0  # default threshold: this many baseline standard deviations
RELEASE_RANGE_FRACTION = 0.05  # ... and at least this fraction of the channel's range
RELEASE_CONFIRM = 3  # samples in a row beyond the threshold make a departure
MIN_BASELINE_SAMPLES = 5
MIN_OVERLAP_FRACTION = 0.5  # xcorr: overlap of at least this fraction of the shorter record
OFFSET_XTOL = 1e-6  # of a sample interval: sub-sample refinement of a correlation peak
GRID_EPS = 1e-9  # of a sample interval: a time this close to a grid point is on it


def find_offset(
    channel_map: ChannelMap, measured: MeasuredSignals, simulated: SimulatedSignals
) -> tuple[float, str]:
    """The offset of equation (2) by the map's alignment method: (offset s, text)."""
    a = channel_map.alignment
    if a.method == "offset":
        return a.offset, f"offset {a.offset:.6g} s as given"
    if a.method == "release":
        return release_offset(channel_map, measured, simulated)
    return cross_correlation_offset(channel_map, measured, simulated)


def release_offset(
    channel_map: ChannelMap, measured: MeasuredSignals, simulated: SimulatedSignals
) -> tuple[float, str]:
    """Method "release": the offset from the instant the channel leaves its rest.

    The rest value x_r and its noise s come from the samples of the first `baseline` s;
    the departure is the first of RELEASE_CONFIRM samples in a row with
    |x - x_r| > threshold, timed by linear interpolation between the samples around the
    crossing (t_dep, experiment time). The simulation makes the same departure from its
    initial value at t_sim,dep (also interpolated); the release is at

        offset = t_dep - t_sim,dep,

    so that the time the rig takes to move `threshold` away from rest does not shift it.
    Its error is about s / |dx/dt| at the crossing.
    """
    a = channel_map.alignment
    name = a.channel
    assert name is not None  # the map's "release" alignment names its channel
    t, x = measured.time, measured.values[name]
    item, src = 'section "alignment"', channel_map.path
    rest = t <= t[0] + a.baseline
    if rest.sum() < MIN_BASELINE_SAMPLES:
        raise ExperimentError(
            f"the first {a.baseline:g} s hold {int(rest.sum())} samples: "
            f"expected at least {MIN_BASELINE_SAMPLES} at rest before the "
            "release",
            item,
            "baseline",
            src,
        )
    x_rest = float(np.mean(x[rest]))
    noise = float(np.std(x[rest], ddof=1))
    threshold = a.threshold
    if threshold is None:
        threshold = max(RELEASE_NOISE_MULTIPLE * noise, RELEASE_RANGE_FRACTION * float(np.ptp(x)))
    t_dep = _departure_time(t, x - x_rest, threshold, ~rest)
    if t_dep is None:
        raise ExperimentError(
            f'channel "{name}" never leaves its rest value {x_rest:.6g} by more than '
            f"{threshold:.6g} after the first {a.baseline:g} s: expected a release in the "
            "record (or a smaller threshold)",
            item,
            "threshold",
            src,
        )
    ts = simulated.time
    xs = simulated.values[name]
    t_sim = _departure_time(ts, xs - xs[0], threshold, np.ones(len(ts), dtype=bool))
    if t_sim is None:
        raise ExperimentError(
            f'in the simulation, channel "{name}" never leaves its initial value by more '
            f"than {threshold:.6g}: expected the same departure as in the experiment",
            item,
            "threshold",
            src,
        )
    offset = t_dep - t_sim
    text = (
        f'release: "{name}" leaves its rest value {x_rest:.6g} (noise {noise:.3g}) by '
        f"{threshold:.6g} at t = {t_dep:.6g} s in the experiment and at "
        f"{t_sim:.6g} s in the simulation; offset {offset:.6g} s"
    )
    return offset, text


def _departure_time(
    t: NDArray[np.float64],
    deviation: NDArray[np.float64],
    threshold: float,
    allowed: NDArray[np.bool_],
) -> float | None:
    """First time |deviation| exceeds threshold for RELEASE_CONFIRM samples in a row
    (only where `allowed`), linearly interpolated; None when it never does."""
    beyond = (np.abs(deviation) > threshold) & allowed
    run = np.convolve(beyond.astype(int), np.ones(RELEASE_CONFIRM, dtype=int), "valid")
    starts = np.flatnonzero(run == RELEASE_CONFIRM)
    if not len(starts):
        return None
    k = int(starts[0])
    if k == 0 or not allowed[k - 1]:
        return float(t[k])
    d0, d1 = abs(deviation[k - 1]), abs(deviation[k])
    frac = (threshold - d0) / (d1 - d0) if d1 != d0 else 1.0
    return float(t[k - 1] + min(max(frac, 0.0), 1.0) * (t[k] - t[k - 1]))


def _correlation(x: NDArray[np.float64], y: NDArray[np.float64]) -> float:
    x = x - x.mean()
    y = y - y.mean()
    den = math.sqrt(float(np.dot(x, x) * np.dot(y, y)))
    return float(np.dot(x, y) / den) if den > 0 else 0.0


def _grid_overlap(
    n: int, t_first: float, dt: float, lo: float, count: int, t0_sim: float, t1_sim: float
) -> NDArray[np.int64]:
    """For each offset lo + j dt (j < count): the number of the n record samples
    t_first + i dt that fall inside the run, t0_sim <= t - offset <= t1_sim."""
    j = np.arange(count)
    g0 = t_first - lo  # record sample i at offset j lies at run time g0 + (i - j) dt
    m0 = math.ceil((t0_sim - g0) / dt - GRID_EPS)
    m1 = math.floor((t1_sim - g0) / dt + GRID_EPS)
    first = np.maximum(0, m0 + j)
    last = np.minimum(n - 1, m1 + j)
    return np.maximum(0, last - first + 1)


def held_correlations(
    x: NDArray[np.float64],
    t_first: float,
    dt: float,
    lo: float,
    count: int,
    run: Any,
    t0_sim: float,
    t1_sim: float,
) -> NDArray[np.float64]:
    """The correlation coefficient of `cross_correlation_offset` at each offset
    lo + j dt (j < count) at once, for a record x sampled every dt from t_first.

    At offset j the record's sample i lies at the run's time g_(i-j), g_m = t_first -
    lo + m dt: every offset reads the run on the one grid g, evaluated once (held at
    its first value before t0_sim, absent after t1_sim). The pairs compared are
    (x_i, R_(i-j)) for the samples the run covers and (x_0, R_m) for the b_j run
    samples before the record's first, m = -j - b_j .. -j - 1; their sums come from
    cumulative sums and the cross term sum_i x_i R_(i-j) from one FFT correlation
    (scipy.signal.correlate), the series' means taken out first. -inf where fewer
    than two pairs."""
    n = len(x)
    j = np.arange(count)
    g0 = t_first - lo
    b = np.maximum(0, np.floor((g0 - j * dt - t0_sim) / dt + 1e-9)).astype(np.int64)
    m1 = math.floor((t1_sim - g0) / dt + GRID_EPS)  # the run's last grid point
    m_lo = int(min(-count, int(np.min(-j - b))))
    m = np.arange(m_lo, n)
    inside = m <= m1
    r = np.zeros(len(m))
    r[inside] = run(np.maximum(g0 + m[inside] * dt, t0_sim))
    xc = x - np.mean(x)
    rc = np.where(inside, r - (np.mean(r[inside]) if inside.any() else 0.0), 0.0)
    px = np.concatenate([[0.0], np.cumsum(xc)])
    pxx = np.concatenate([[0.0], np.cumsum(xc * xc)])
    pr = np.concatenate([[0.0], np.cumsum(rc)])
    prr = np.concatenate([[0.0], np.cumsum(rc * rc)])
    nx = np.clip(m1 + j + 1, 0, n)  # record samples the run covers: i - j <= m1
    start = -j - m_lo  # index of R_(-j) in r
    sx = b * xc[0] + px[nx]
    sxx = b * xc[0] ** 2 + pxx[nx]
    pre_r = pr[start] - pr[start - b]
    pre_rr = prr[start] - prr[start - b]
    sr = pre_r + pr[start + nx] - pr[start]
    srr = pre_rr + prr[start + nx] - prr[start]
    full = correlate(rc, xc, mode="full", method="fft")  # [k]: sum_i rc[i + k - n + 1] xc_i
    sxr = xc[0] * pre_r + full[n - 1 + start]
    count_pairs = b + nx
    with np.errstate(divide="ignore", invalid="ignore"):
        cov = sxr - sx * sr / count_pairs
        den = np.sqrt(np.maximum(sxx - sx * sx / count_pairs, 0.0)) * np.sqrt(
            np.maximum(srr - sr * sr / count_pairs, 0.0)
        )
        out = np.where(den > 0, cov / np.where(den > 0, den, 1.0), 0.0)
    return np.where(count_pairs >= 2, out, -np.inf)


def cross_correlation_offset(
    channel_map: ChannelMap, measured: MeasuredSignals, simulated: SimulatedSignals
) -> tuple[float, str]:
    """Method "xcorr": the offset maximising the correlation coefficient between the
    channel's experiment values x(t_k) and simulated values s(t_k - offset), each
    side held at its first value before it starts (the rig at rest before the record
    and before the run): the record's samples before the run's start are compared
    with the run's initial value, and the run's, on the record's sample grid, before
    the record's first sample with that sample; samples after either side's end are
    left out. A shift that leaves the start of either side unexplained is paid for
    there, so that a repeated pattern (a square wave's holds) cannot match one part
    of the record by itself, and a run shorter or longer than the record is
    aligned on what both cover. The offsets tried are the experiment's sample grid over
    `search` (default: the run's start anywhere from half the record before the
    record's start to half of it after), with the run and the record overlapping by
    at least MIN_OVERLAP_FRACTION of the shorter, all scored at once
    (`held_correlations`); the best is refined between its neighbours (bounded
    scalar search on the spline of the simulation, to OFFSET_XTOL of a sample
    interval)."""
    a = channel_map.alignment
    name = a.channel
    assert name is not None  # the map's "xcorr" alignment names its channel
    t, x = measured.time, measured.values[name]
    dt = measured.sample_interval
    half = 0.5 * (t[-1] - t[0])
    lo, hi = a.search if a.search is not None else (t[0] - half, t[0] + half)
    min_overlap = MIN_OVERLAP_FRACTION * min(t[-1] - t[0], simulated.t_end - simulated.time[0])
    candidates = lo + dt * np.arange(int(np.floor((hi - lo) / dt)) + 1)
    spline = simulated.spline(name)

    def overlap(offset: float) -> NDArray[np.bool_]:
        ts = t - offset
        return (ts >= simulated.time[0]) & (ts <= simulated.t_end)

    t0_sim, t1_sim = simulated.time[0], simulated.t_end

    def corr(offset: float, mask: NDArray[np.bool_]) -> float:
        ts = t - offset
        covered = ts <= t1_sim + GRID_EPS * dt
        record = x[covered]
        run = spline(np.maximum(ts[covered], t0_sim))  # the run held before it starts
        before = int(np.floor((ts[0] - t0_sim) / dt + 1e-9))  # run samples before t[0]
        if before > 0:
            record = np.concatenate([np.full(before, x[0]), record])
            run = np.concatenate([spline(ts[0] - dt * np.arange(before, 0, -1)), run])
        return _correlation(record, run)

    scores = held_correlations(x, t[0], dt, lo, len(candidates), spline, t0_sim, t1_sim)
    covered = _grid_overlap(len(x), t[0], dt, lo, len(candidates), t0_sim, t1_sim)
    scores[covered * dt < min_overlap] = -np.inf
    if not np.isfinite(scores).any():
        raise ExperimentError(
            f"no offset in [{lo:.6g}, {hi:.6g}] s overlaps the run ({simulated.t_end:.6g} s) "
            f"and the record by at least {min_overlap:.6g} s: expected a search range that "
            "puts the run inside the record",
            'section "alignment"',
            "search",
            channel_map.path,
        )
    i = int(np.argmax(scores))
    best = float(candidates[i])
    mask = overlap(best - dt) & overlap(best + dt)  # fixed while refining
    res = minimize_scalar(
        lambda off: -corr(off, mask),
        bounds=(best - dt, best + dt),
        method="bounded",
        options={"xatol": OFFSET_XTOL * dt},
    )
    offset, score = (
        (float(res.x), -res.fun) if -res.fun >= corr(best, mask) else (best, corr(best, mask))
    )
    text = (
        f'cross-correlation of "{name}" over offsets {lo:.6g} to {hi:.6g} s: '
        f"offset {offset:.6g} s (correlation {score:.6f})"
    )
    return offset, text

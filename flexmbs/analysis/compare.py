"""Comparing a run with an experiment: metrics, spectra, plots and reports.

The channels of the map (flexmbs.analysis.channel_map) are compared on a common time
base: the experiment's own samples t_k (uniform; the experiment is never interpolated,
so its noise stays white) that fall inside the run after the alignment,
t_sim,k = t_k - offset in [0, t_end]. The simulation is interpolated onto them with a
cubic spline through its outputs. A channel with a low-pass filter in the map has the
filter applied to both series on this base. Per channel, with e_k the experiment,
s_k the simulation and n samples:

    RMSE        = sqrt(sum_k (s_k - e_k)^2 / n)                   (unit of the sensor)
    NRMSE       = RMSE / (max_k e_k - min_k e_k)                  (the range measured)
    largest     = max_k |s_k - e_k|, and its time
    correlation = Pearson's r of e and s
    lag         = the tau maximising the correlation of the edges of e(t) and
                  s(t + tau), their differences over a few samples (s delayed by tau:
                  positive when the simulation lags; time_lag), searched within the
                  map's max_lag, else a quarter period of the experiment's dominant
                  frequency (at most a quarter of the record), the smallest |tau|
                  among equal maxima, refined between samples by a parabola
    phase       = -arg P_es(f_d) in degrees, P_es the cross spectral density (Welch)
                  at the experiment's dominant frequency f_d (positive: the simulation
                  lags)

Spectra: Welch's power spectral density of both series (scipy.signal.welch, Hann
window, half-overlapping segments of `segment` s; by default one segment, the whole
common record, for the finest resolution 1/T). Peaks are local maxima that stand at
least PEAK_PROMINENCE_DECADES above their surroundings in log10 power and within
PEAK_RANGE_DECADES of the largest, at most MAX_PEAKS of them, their frequency refined
by a parabola through log10 power at the three bins around each.

Reports: write_report puts report.md, report.json and the plots overlay.png (both
series), error.png (s - e) and spectrum.png (both densities, peaks marked) in a folder.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.signal import correlate, csd, find_peaks, welch

from ..errors import ExperimentError
from .channel_map import (
    filtered,
    find_offset,
    load_channel_map,
    measured_signals,
    noise_power_gain,
    record_quantum,
    sensor_quantities,
    simulated_signals,
    third_difference_noise,
)
from .experiment import read_experiment

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .channel_map import ChannelMap, MeasuredSignals, SimulatedSignals

__all__ = [
    "ChannelComparison",
    "Comparison",
    "Spectrum",
    "compare_files",
    "compare_signals",
    "rmse",
    "normalised_rmse",
    "largest_error",
    "correlation_coefficient",
    "time_lag",
    "edge_correlation",
    "edge_span",
    "phase_lag",
    "power_spectrum",
    "spectral_peaks",
    "dominant_frequency",
    "write_report",
    "write_plots",
    "format_summary",
    "format_markdown",
    "MIN_COMMON_SAMPLES",
]

MIN_COMMON_SAMPLES = 16  # on the common time base
PEAK_PROMINENCE_DECADES = 1.0
PEAK_RANGE_DECADES = 4.0
MAX_PEAKS = 6
LAG_PERIOD_FRACTION = 0.25  # lag search: +- this fraction of the dominant period
MAX_LAG_FRACTION = 0.25  # ... and at most this fraction of the record
LAG_TIE = 0.02  # lag: maxima of the edge correlation within this fraction of the largest
LAG_PEAK_PROMINENCE = 0.1  # ... standing this fraction of it above their surroundings
LAG_ENERGY_FLOOR = 1e-12  # of the whole energies: an overlap with less has no correlation
LAG_EDGE_SIGNAL = 0.95  # lag: the share of the differences' mean square that is signal
PLOT_WIDTH, PLOT_PANEL_HEIGHT, PLOT_DPI = 8.0, 2.2, 110
PLOT_PSD_DECADES = 8  # spectrum plot: decades below the largest density shown
PLOT_PEAK_SPAN = 2.0  # spectrum plot: up to this times the highest peak frequency ...
PLOT_MIN_BINS = 40  # ... and at least this many bins (or up to the Nyquist frequency)
REPORT_MD, REPORT_JSON = "report.md", "report.json"
PLOT_FILES = {"overlay": "overlay.png", "error": "error.png", "spectrum": "spectrum.png"}


# ---------------------------------------------------------------------- metrics
def rmse(experiment: ArrayLike, simulation: ArrayLike) -> float:
    """sqrt(mean((s - e)^2)), in the unit of the values."""
    d = np.asarray(simulation) - np.asarray(experiment)
    return float(np.sqrt(np.mean(d * d)))


def normalised_rmse(experiment: ArrayLike, simulation: ArrayLike) -> float:
    """RMSE / (max e - min e): the error as a fraction of the range measured."""
    span = float(np.ptp(experiment))
    return rmse(experiment, simulation) / span if span > 0 else math.inf


def largest_error(
    time: NDArray[np.float64], experiment: ArrayLike, simulation: ArrayLike
) -> tuple[float, float]:
    """(max |s - e|, the time where it occurs)."""
    d = np.abs(np.asarray(simulation) - np.asarray(experiment))
    k = int(np.argmax(d))
    return float(d[k]), float(time[k])


def correlation_coefficient(
    experiment: NDArray[np.float64] | Sequence[float],
    simulation: NDArray[np.float64] | Sequence[float],
) -> float:
    """Pearson's r of the two series (0 when one is constant)."""
    e = np.asarray(experiment) - np.mean(experiment)
    s = np.asarray(simulation) - np.mean(simulation)
    den = math.sqrt(float(np.dot(e, e) * np.dot(s, s)))
    return float(np.dot(e, s) / den) if den > 0 else 0.0


def time_lag(
    experiment: ArrayLike, simulation: ArrayLike, sample_interval: float, max_lag: float
) -> float:
    """The delay tau (s) of the simulation behind the experiment, located on the edges:
    the whole-sample shift k maximising the normalised cross-correlation of the
    differences over m samples D_i = x_(i+m) - x_i of the experiment (De) and of the
    simulation (Ds),

        rho(k) = sum_i De_i Ds_(i+k) / sqrt(sum_i De_i^2 sum_i Ds_(i+k)^2),

    each sum over every i that both series cover at that shift, for |k dt| <= max_lag
    (s). A step's difference is a pulse at the step, so the steps of a square wave
    locate the shift where the correlation of its levels, flat over the holds and
    periodic, would not; m is the shortest span over which the record's differences
    stand above its noise (`edge_span`), and De and Ds, both centred on i + m/2, keep
    the lag. Among maxima within LAG_TIE of the largest (a periodic record's repeats)
    the one of smallest |k| is taken; it is refined between samples by the parabola
    through rho at k - 1, k, k + 1. 0 when either series is constant."""
    e = np.asarray(experiment, dtype=float)
    s = np.asarray(simulation, dtype=float)
    kmax = max(1, min(int(max_lag / sample_interval), (len(e) - 2) // 2))
    m = edge_span(e, kmax)
    rho = edge_correlation(e[m:] - e[:-m], s[m:] - s[:-m], kmax)
    if not np.any(rho):
        return 0.0
    i = _smallest_best_shift(rho)
    delta = 0.0
    if 0 < i < len(rho) - 1:
        den = rho[i - 1] - 2.0 * rho[i] + rho[i + 1]
        if den < 0:
            delta = min(max(0.5 * (rho[i - 1] - rho[i + 1]) / den, -0.5), 0.5)
    return float((i - kmax + delta) * sample_interval)


def edge_span(values: ArrayLike, kmax: int) -> int:
    """The span m (samples) of `time_lag`'s differences: the shortest of 1, 2, 4, ...
    (below kmax / 2) over which the white noise's share of the differences' mean
    square, 2 sigma^2 / mean((x_(i+m) - x_i)^2), is at most 1 - LAG_EDGE_SIGNAL;
    sigma the record's noise: the third differences' estimate, at least q / sqrt(12)
    on a record quantized to a step q (channel_map.measurement_noise). A finely
    sampled record of coarse counts (an encoder, a print to 1 mrad) needs a span over
    which the motion covers many counts; a clean one takes single differences."""
    x = np.asarray(values, dtype=float)
    q = record_quantum(x)
    sigma = max(third_difference_noise(x), (q or 0.0) / math.sqrt(12.0))
    top = max(1, kmax // 2)
    m = 1
    while m < top:
        d = x[m:] - x[:-m]
        if 2.0 * sigma**2 <= (1.0 - LAG_EDGE_SIGNAL) * float(np.mean(d * d)):
            break
        m *= 2
    return min(m, top)


def edge_correlation(
    de: NDArray[np.float64], ds: NDArray[np.float64], kmax: int
) -> NDArray[np.float64]:
    """rho(k) of `time_lag` for k = -kmax .. kmax (2 kmax + 1 values): the products'
    sums for every shift at once by scipy.signal.correlate (FFT), the energies of the
    overlaps from cumulative sums of the squares."""
    n = len(de)
    full = correlate(ds, de, mode="full", method="fft")  # index n - 1 + k: sum de_i ds_(i+k)
    lags = np.arange(-kmax, kmax + 1)
    num = full[n - 1 + lags]
    ce = np.concatenate([[0.0], np.cumsum(de * de)])
    cs = np.concatenate([[0.0], np.cumsum(ds * ds)])
    lo = np.maximum(0, -lags)  # the overlap: i in [lo, hi)
    hi = np.minimum(n, n - lags)
    energy = (ce[hi] - ce[lo]) * (cs[hi + lags] - cs[lo + lags])
    scale = float(max(ce[-1], 1e-300) * max(cs[-1], 1e-300))
    ok = energy > LAG_ENERGY_FLOOR * scale
    return np.where(ok, num / np.sqrt(np.where(ok, energy, 1.0)), 0.0)


def _smallest_best_shift(rho: NDArray[np.float64]) -> int:
    """The index of the maximum of `rho` nearest its middle among the distinct maxima
    (peaks standing LAG_PEAK_PROMINENCE of the largest above their surroundings, and
    the ends) within LAG_TIE of the largest."""
    best = float(rho.max())
    peaks, _ = find_peaks(rho, prominence=LAG_PEAK_PROMINENCE * abs(best))
    candidates = [int(i) for i in peaks] + [int(np.argmax(rho))]
    near = [i for i in candidates if rho[i] >= best - LAG_TIE * abs(best)]
    middle = (len(rho) - 1) // 2
    return min(near, key=lambda i: (abs(i - middle), -rho[i]))


def phase_lag(
    experiment: ArrayLike,
    simulation: ArrayLike,
    sample_interval: float,
    frequency: float,
    nperseg: int,
) -> float:
    """-arg of the cross spectral density P_es at `frequency` (Hz), in degrees
    (positive when the simulation lags), interpolated between the two nearest bins."""
    f, p = csd(
        experiment, simulation, fs=1.0 / sample_interval, nperseg=nperseg, detrend="constant"
    )
    re = np.interp(frequency, f, p.real)
    im = np.interp(frequency, f, p.imag)
    return float(-math.degrees(math.atan2(im, re)))


@dataclass
class Spectrum:
    """Welch power spectral densities of one channel: frequency (m,) Hz, experiment and
    simulation (m,) in unit^2/Hz; the segment (s) and the resolution 1/segment (Hz)."""

    frequency: np.ndarray
    experiment: np.ndarray
    simulation: np.ndarray
    segment: float
    resolution: float


def power_spectrum(
    values: ArrayLike, sample_interval: float, nperseg: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(frequency Hz, PSD unit^2/Hz): Welch, Hann window, half-overlapping segments of
    nperseg samples, the mean removed from each."""
    return welch(
        np.asarray(values, dtype=float),
        fs=1.0 / sample_interval,
        nperseg=nperseg,
        detrend="constant",
    )


def spectral_peaks(frequency: NDArray[np.float64], psd: NDArray[np.float64]) -> list[float]:
    """Peak frequencies (Hz, ascending) of a power spectrum (see the module docstring)."""
    positive = psd > 0
    if positive.sum() < 3:
        return []
    logp = np.log10(np.where(positive, psd, psd[positive].min()))
    idx, props = find_peaks(
        logp, prominence=PEAK_PROMINENCE_DECADES, height=logp.max() - PEAK_RANGE_DECADES
    )
    if not len(idx):
        return []
    idx = idx[np.argsort(props["peak_heights"])[::-1][:MAX_PEAKS]]
    return [_refined_peak(frequency, logp, k) for k in sorted(idx)]


def _refined_peak(frequency: NDArray[np.float64], logp: NDArray[np.float64], k: int) -> float:
    """The frequency of the maximum of the parabola through log10 power at bins k-1, k,
    k+1 (bin k's own frequency at the ends of the spectrum)."""
    if not 0 < k < len(logp) - 1:
        return float(frequency[k])
    a, b, c = logp[k - 1], logp[k], logp[k + 1]
    den = a - 2.0 * b + c
    delta = 0.5 * (a - c) / den if den < 0 else 0.0
    return float(frequency[k] + delta * (frequency[1] - frequency[0]))


def dominant_frequency(frequency: NDArray[np.float64], psd: NDArray[np.float64]) -> float:
    """The frequency (Hz) of the largest power above 0 Hz, refined as the peaks are."""
    k = 1 + int(np.argmax(psd[1:]))
    return _refined_peak(frequency, np.log10(np.maximum(psd, np.finfo(float).tiny)), k)


# ------------------------------------------------------------------- comparison
@dataclass
class ChannelComparison:
    """The metrics of one channel (see the module docstring); unit: the SI unit of
    the sensor's values; times in simulation time (s)."""

    name: str
    sensor: str
    experiment_channel: str
    unit: str
    rmse: float
    nrmse: float
    largest_error: float
    largest_error_time: float
    correlation: float
    lag: float
    phase: float
    phase_frequency: float
    peaks_experiment: list[float]
    peaks_simulation: list[float]
    experiment_range: float
    lowpass: float | None = None
    noise_power_gain: float = 1.0
    max_lag: float = math.inf


@dataclass
class Comparison:
    """A run against an experiment on their common time base.

    time : (n,) s, simulation time of the common samples (experiment time - offset);
    experiment, simulation : name -> (n,) SI values as compared (filtered where the map
    filters); spectra : name -> Spectrum; channels : [ChannelComparison] in map order.
    """

    result_path: str
    experiment_path: str
    map_path: str
    offset: float
    alignment: str
    sample_interval: float
    time: np.ndarray
    experiment: dict[str, NDArray[np.float64]]
    simulation: dict[str, NDArray[np.float64]]
    spectra: dict[str, Spectrum]
    channels: list[ChannelComparison]
    notes: list[str] = field(default_factory=list)
    result_status: str = "finished"

    def channel(self, name: str) -> ChannelComparison:
        return next(c for c in self.channels if c.name == name)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-able data (no time series)."""
        return {
            "result": self.result_path,
            "result_status": self.result_status,
            "experiment": self.experiment_path,
            "map": self.map_path,
            "offset": self.offset,
            "alignment": self.alignment,
            "common_time_base": {
                "samples": int(len(self.time)),
                "t_start": float(self.time[0]),
                "t_end": float(self.time[-1]),
                "sample_interval": self.sample_interval,
            },
            "spectrum": _spectrum_settings(self.spectra),
            "channels": [_json_ready(asdict(c)) for c in self.channels],
            "notes": list(self.notes),
        }


def _spectrum_settings(spectra: Mapping[str, Spectrum]) -> dict[str, str | float]:
    s = next(iter(spectra.values()), None)
    if s is None:
        return {}
    return {
        "method": "welch, hann window, 50 % overlap",
        "segment": s.segment,
        "resolution": s.resolution,
    }


def _json_ready(d: Mapping[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in d.items():
        if isinstance(v, float) and not math.isfinite(v):
            v = None
        out[k] = v
    return out


def compare_signals(
    channel_map: ChannelMap,
    measured: MeasuredSignals,
    simulated: SimulatedSignals,
    offset: float | None = None,
    alignment: str | None = None,
    segment: float | None = None,
    window: tuple[float, float] | None = None,
) -> Comparison:
    """Compare MeasuredSignals with SimulatedSignals (channel_map module).

    offset : t_exp - t_sim (s); None: found by the map's alignment.
    alignment : the text saying how the offset was found (with `offset`).
    segment : Welch segment (s); None: the whole common record.
    window : (t0, t1) s of simulation time: only the samples there are compared (the
    alignment still sees the whole record); None: every common sample.
    Returns a Comparison (paths left empty: compare_files fills them)."""
    if offset is None:
        offset, alignment = find_offset(channel_map, measured, simulated)
    t_sim = measured.time - offset
    common = (t_sim >= simulated.time[0]) & (t_sim <= simulated.t_end)
    if window is not None:
        common &= (t_sim >= window[0]) & (t_sim <= window[1])
    n = int(common.sum())
    if n < MIN_COMMON_SAMPLES:
        raise ExperimentError(
            f"the run ({simulated.time[0]:.6g} to {simulated.t_end:.6g} s) and the record "
            f"shifted by the offset {offset:.6g} s share {n} samples: expected at least "
            f"{MIN_COMMON_SAMPLES}; check the alignment",
            'section "alignment"',
            source=channel_map.path,
        )
    t = t_sim[common]
    dt = measured.sample_interval
    nperseg = _segment_samples(segment, n, dt)
    exp_values, sim_values, spectra, channels = {}, {}, {}, []
    for ch in channel_map.channels:
        e = filtered(ch, measured.values[ch.name][common], dt)
        s = filtered(ch, simulated.at(ch.name, t), dt)
        exp_values[ch.name], sim_values[ch.name] = e, s
        f, pe = power_spectrum(e, dt, nperseg)
        _, ps = power_spectrum(s, dt, nperseg)
        spectra[ch.name] = Spectrum(f, pe, ps, nperseg * dt, 1.0 / (nperseg * dt))
        peaks_e, peaks_s = spectral_peaks(f, pe), spectral_peaks(f, ps)
        f_dominant = dominant_frequency(f, pe)
        max_lag = channel_map.alignment.max_lag or min(
            LAG_PERIOD_FRACTION / f_dominant, MAX_LAG_FRACTION * n * dt
        )
        big, t_big = largest_error(t, e, s)
        channels.append(
            ChannelComparison(
                name=ch.name,
                sensor=ch.sensor,
                experiment_channel=ch.experiment,
                unit=simulated.units.get(ch.name, ""),
                rmse=rmse(e, s),
                nrmse=normalised_rmse(e, s),
                largest_error=big,
                largest_error_time=t_big,
                correlation=correlation_coefficient(e, s),
                lag=time_lag(e, s, dt, max_lag),
                max_lag=max_lag,
                phase=phase_lag(e, s, dt, f_dominant, nperseg),
                phase_frequency=f_dominant,
                peaks_experiment=peaks_e,
                peaks_simulation=peaks_s,
                experiment_range=float(np.ptp(e)),
                lowpass=ch.lowpass,
                noise_power_gain=noise_power_gain(dt, ch.lowpass, ch.lowpass_order),
            )
        )
    return Comparison(
        result_path="",
        experiment_path="",
        map_path=channel_map.path,
        offset=float(offset),
        alignment=alignment or "",
        sample_interval=dt,
        time=t,
        experiment=exp_values,
        simulation=sim_values,
        spectra=spectra,
        channels=channels,
        notes=list(measured.notes),
    )


def _segment_samples(segment: float | None, n: int, dt: float) -> int:
    if segment is None:
        return n
    k = int(round(segment / dt))
    if not 8 <= k <= n:
        raise ExperimentError(
            f"a spectrum segment of {segment:g} s is {k} samples: expected "
            f"8 to {n} (the common record)"
        )
    return k


def compare_files(
    result_path: str | os.PathLike[str],
    experiment_path: str | os.PathLike[str],
    map_path: str | os.PathLike[str],
    gaps: str | None = None,
    group: str | None = None,
    segment: float | None = None,
    offset: float | None = None,
    window: tuple[float, float] | None = None,
) -> Comparison:
    """Compare a result file with an experiment file through a channel map file.

    gaps : the gap policy ("error", "interpolate", "cut"), None: the map's.
    group : the HDF5 group of the experiment, None: the map's or the only one.
    segment : Welch segment (s); offset : t_exp - t_sim (s), None: the map's alignment.
    window : (t0, t1) s of simulation time compared (compare_signals), None: all.
    """
    from ..io.results import open_result

    channel_map = load_channel_map(map_path)
    result = open_result(result_path)
    experiment = read_experiment(
        experiment_path, channel_map.time_name, group if group is not None else channel_map.group
    )
    measured = measured_signals(channel_map, experiment, gaps)
    simulated = simulated_signals(
        result.time, result.sensors, sensor_quantities(result.model_json), channel_map, result.path
    )
    text = None if offset is None else f"offset {offset:.6g} s as given"
    comparison = compare_signals(channel_map, measured, simulated, offset, text, segment, window)
    if window is not None:
        comparison.notes.append(
            f"compared from t = {window[0]:g} to {window[1]:g} s of simulation time (--window)"
        )
    comparison.result_path = os.fspath(result_path)
    comparison.experiment_path = os.fspath(experiment_path)
    comparison.result_status = result.status
    output_step = float(np.median(np.diff(result.time))) if len(result.time) > 1 else 0.0
    if output_step >= comparison.sample_interval * (1.0 - 1e-9):
        comparison.notes.append(
            f"the run's outputs (every {output_step:.6g} s) are no finer than the "
            f"experiment's samples (every {comparison.sample_interval:.6g} s): between "
            "outputs the simulation is a cubic spline, so fast motion is blurred; a run "
            "with a finer --output-step sharpens it"
        )
    if result.status != "finished":
        comparison.notes.append(
            f"the run did not finish ({result.status}): compared up to t = {result.time[-1]:.6g} s"
        )
    return comparison


# ---------------------------------------------------------------------- reports
def _fmt(x: float | None, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{x:.{digits}g}"


def _peaks_text(peaks: Iterable[float]) -> str:
    return ", ".join(f"{f:.3g}" for f in peaks) or "-"


def format_summary(comparison: Comparison) -> str:
    """A few lines for the terminal: the metrics table and the spectral peaks."""
    c = comparison
    lines = [
        f"alignment: {c.alignment}; t_exp = t_sim + {c.offset:.6g} s",
        f"{len(c.time)} common samples, t = {c.time[0]:.4g} to {c.time[-1]:.4g} s "
        f"(simulation time), every {c.sample_interval:.4g} s",
    ]
    lines += [f"note: {n}" for n in c.notes]
    head = (
        f"{'channel':<12} {'unit':<5} {'RMSE':>10} {'NRMSE':>8} {'largest':>10} "
        f"{'at t (s)':>8} {'corr':>8} {'lag (s)':>9} {'phase (deg)':>11}"
    )
    lines += ["", head]
    for ch in c.channels:
        lines.append(
            f"{ch.name:<12} {ch.unit:<5} {ch.rmse:>10.3g} {ch.nrmse:>8.3%} "
            f"{ch.largest_error:>10.3g} {ch.largest_error_time:>8.3f} "
            f"{ch.correlation:>8.5f} {ch.lag:>9.2g} {ch.phase:>11.3f}"
        )
    spec = next(iter(c.spectra.values()))
    lines += [
        "",
        f"spectral peaks (Hz; Welch, segments of {spec.segment:.3g} s, "
        f"resolution {spec.resolution:.3g} Hz):",
    ]
    for ch in c.channels:
        lines.append(f"{ch.name:<12} experiment {_peaks_text(ch.peaks_experiment)}")
        lines.append(f"{'':<12} simulation {_peaks_text(ch.peaks_simulation)}")
    return "\n".join(lines)


def format_markdown(comparison: Comparison, plots: Mapping[str, str]) -> str:
    """The Markdown report; `plots`: name -> PNG file name (relative), or empty."""
    c = comparison
    spec = next(iter(c.spectra.values()))
    lines = [
        f"# Comparison: {os.path.basename(c.result_path)} against "
        f"{os.path.basename(c.experiment_path)}",
        "",
        f"* result file: `{c.result_path}` (status {c.result_status})",
        f"* experiment file: `{c.experiment_path}`",
        f"* channel map: `{c.map_path}`",
        f"* alignment: {c.alignment}; t_exp = t_sim + {c.offset:.6g} s",
        f"* common time base: {len(c.time)} samples every {c.sample_interval:.6g} s, "
        f"t_sim = {c.time[0]:.6g} to {c.time[-1]:.6g} s",
    ]
    lines += [f"* note: {n}" for n in c.notes]
    lines += [
        "",
        "## Time domain",
        "",
        "| channel | sensor | experiment | unit | RMSE | NRMSE | largest error "
        "| at t (s) | correlation | lag (s) | phase (deg at Hz) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for ch in c.channels:
        lines.append(
            f"| {ch.name} | {ch.sensor} | {ch.experiment_channel} | {ch.unit} | "
            f"{_fmt(ch.rmse)} | {ch.nrmse:.3%} | {_fmt(ch.largest_error)} | "
            f"{ch.largest_error_time:.3f} | {ch.correlation:.6f} | {_fmt(ch.lag, 3)} | "
            f"{ch.phase:.2f} at {ch.phase_frequency:.3g} |"
        )
    lowpassed = [ch for ch in c.channels if ch.lowpass]
    if lowpassed:
        lines += [
            "",
            "Low-pass filtered (zero-phase, both series): "
            + ", ".join(
                f"{ch.name} at {ch.lowpass:g} Hz (noise power gain {ch.noise_power_gain:.3g})"
                for ch in lowpassed
            )
            + ".",
        ]
    lines += [
        "",
        "## Spectral peaks",
        "",
        f"Welch power spectral density, Hann window, segments of {spec.segment:.4g} s "
        f"with 50 % overlap, resolution {spec.resolution:.4g} Hz; peak frequencies "
        "refined between bins.",
        "",
        "| channel | experiment (Hz) | simulation (Hz) |",
        "|---|---|---|",
    ]
    for ch in c.channels:
        lines.append(
            f"| {ch.name} | {_peaks_text(ch.peaks_experiment)} | "
            f"{_peaks_text(ch.peaks_simulation)} |"
        )
    if plots:
        lines += ["", "## Plots", ""]
        titles = {
            "overlay": "Experiment and simulation",
            "error": "Error (simulation - experiment)",
            "spectrum": "Power spectral density",
        }
        for key, png in plots.items():
            lines += [f"### {titles[key]}", "", f"![{key}]({png})", ""]
    lines += [
        "",
        "## Definitions",
        "",
        "RMSE = sqrt(mean((s - e)^2)); NRMSE = RMSE / (max e - min e); largest error = "
        "max |s - e|; correlation = Pearson's r; lag = the delay of the simulation "
        "(s) that maximises the correlation of the two series' differences over a few "
        "samples (their edges), searched within +-"
        + ", ".join(f"{ch.max_lag:.3g} s ({ch.name})" for ch in c.channels)
        + "; phase = -arg of the cross spectral "
        "density at the experiment's dominant frequency (positive: the simulation "
        "lags). e: experiment, s: simulation, both calibrated to SI units and "
        "filtered as the map says.",
        "",
    ]
    return "\n".join(lines)


def _figure(npanels: int) -> tuple[Figure, np.ndarray] | tuple[None, None]:
    """A matplotlib Figure on an Agg canvas with `npanels` stacked axes, or None when
    matplotlib is not installed."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        return None, None
    fig = Figure(
        figsize=(PLOT_WIDTH, PLOT_PANEL_HEIGHT * npanels), dpi=PLOT_DPI, layout="constrained"
    )
    FigureCanvasAgg(fig)
    return fig, fig.subplots(npanels, 1, sharex=True, squeeze=False)[:, 0]


def write_plots(comparison: Comparison, out_dir: str | os.PathLike[str]) -> dict[str, str]:
    """overlay.png, error.png, spectrum.png in out_dir; {} without matplotlib."""
    c = comparison
    n = len(c.channels)
    written: dict[str, str] = {}
    fig, axes = _figure(n)
    if fig is None:
        return written
    assert axes is not None  # _figure gives both or neither
    for ax, ch in zip(axes, c.channels):
        ax.plot(c.time, c.experiment[ch.name], lw=0.8, color="0.45", label="experiment")
        ax.plot(c.time, c.simulation[ch.name], lw=1.0, color="C1", label="simulation")
        ax.set_ylabel(f"{ch.name} ({ch.unit})")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small", loc="upper right")
    axes[-1].set_xlabel("t (s, simulation time)")
    fig.savefig(os.path.join(out_dir, PLOT_FILES["overlay"]))
    written["overlay"] = PLOT_FILES["overlay"]
    fig, axes = _figure(n)
    assert fig is not None and axes is not None  # matplotlib is there (above)
    for ax, ch in zip(axes, c.channels):
        ax.plot(c.time, c.simulation[ch.name] - c.experiment[ch.name], lw=0.8, color="C3")
        ax.axhline(0.0, color="0.3", lw=0.6)
        ax.set_ylabel(f"{ch.name} error ({ch.unit})")
        ax.set_title(
            f"RMSE {ch.rmse:.3g} {ch.unit}, NRMSE {ch.nrmse:.2%}", fontsize="small", loc="left"
        )
        ax.grid(True, alpha=0.3)
    axes[-1].set_xlabel("t (s, simulation time)")
    fig.savefig(os.path.join(out_dir, PLOT_FILES["error"]))
    written["error"] = PLOT_FILES["error"]
    fig, axes = _figure(n)
    assert fig is not None and axes is not None
    for ax, ch in zip(axes, c.channels):
        s = c.spectra[ch.name]
        ax.semilogy(s.frequency[1:], s.experiment[1:], lw=0.8, color="0.45", label="experiment")
        ax.semilogy(s.frequency[1:], s.simulation[1:], lw=1.0, color="C1", label="simulation")
        for peaks, psd, color in (
            (ch.peaks_experiment, s.experiment, "0.3"),
            (ch.peaks_simulation, s.simulation, "C1"),
        ):
            if peaks:
                ax.plot(peaks, np.interp(peaks, s.frequency, psd), "v", color=color, ms=4)
        top = max(s.experiment[1:].max(), s.simulation[1:].max())
        ax.set_ylim(top * 10.0**-PLOT_PSD_DECADES, top * 3.0)
        ax.set_ylabel("PSD (1/Hz)" if ch.unit in ("", "1") else f"PSD ({ch.unit}^2/Hz)")
        ax.set_title(
            f"{ch.name}: peaks (Hz) experiment {_peaks_text(ch.peaks_experiment)}; "
            f"simulation {_peaks_text(ch.peaks_simulation)}",
            fontsize="small",
            loc="left",
        )
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small", loc="upper right")
    highest = max(
        [f for ch in c.channels for f in ch.peaks_experiment + ch.peaks_simulation] or [0.0]
    )
    spec = c.spectra[c.channels[0].name]
    axes[-1].set_xlim(
        0.0, min(spec.frequency[-1], max(PLOT_PEAK_SPAN * highest, PLOT_MIN_BINS * spec.resolution))
    )
    axes[-1].set_xlabel("f (Hz)")
    fig.savefig(os.path.join(out_dir, PLOT_FILES["spectrum"]))
    written["spectrum"] = PLOT_FILES["spectrum"]
    return written


def write_report(
    comparison: Comparison, out_dir: str | os.PathLike[str], plots: bool = True
) -> list[str]:
    """Write report.md, report.json and (with matplotlib, unless plots=False) the PNG
    plots into out_dir (created). Returns the list of files written."""
    os.makedirs(out_dir, exist_ok=True)
    pngs = write_plots(comparison, out_dir) if plots else {}
    if plots and not pngs:
        comparison.notes.append(
            "no plots: matplotlib is not installed (pip install 'flexmbs[plot]')"
        )
    md = os.path.join(out_dir, REPORT_MD)
    with open(md, "w", encoding="utf-8") as f:
        f.write(format_markdown(comparison, pngs))
    js = os.path.join(out_dir, REPORT_JSON)
    with open(js, "w", encoding="utf-8") as f:
        json.dump(comparison.to_dict(), f, indent=1)
    return [md, js] + [os.path.join(out_dir, p) for p in pngs.values()]

"""Measurements: what the benchmark (or a publication) measured, read from its files.

A measurement set holds cases (threads, and background threads), what was measured for each
(time, bandwidth, latency) with its unit and source, and the machine it ran on.  It is read from
the benchmark's JSON reports and suite folders (``simnuma-bench/1`` and ``/2``) and from
reference datasets in YAML (bundled ones in ``experiments/reference/``).

* :mod:`.data`: :class:`Measurement`, :class:`MeasurementSet`, :class:`MachineInfo` (a measurement's case
  is :class:`simnuma.case.Case`, re-exported here);
* :mod:`.loading`: :func:`load_measurements` from files, folders and bundled names;
* :mod:`.reference`: the reference-dataset format;
* :mod:`.reports`: the benchmark's reports and suites, and which of their numbers are trusted.
"""
from .data import (
    BENCH_FORMAT,
    BENCH_FORMATS,
    METRICS,
    REFERENCE_FORMAT,
    SUITE_FORMAT,
    Case,
    MachineInfo,
    Measurement,
    MeasurementSet,
    parse_case,
)
from .loading import load_measurements, load_source, reference_datasets, resolve_reference
from .reports import CPU_SHARE_TRUSTED, HUGE_TRUSTED, SPREAD_TRUSTED, thread_huge_fraction

__all__ = [
    "BENCH_FORMAT", "BENCH_FORMATS", "CPU_SHARE_TRUSTED", "HUGE_TRUSTED", "METRICS", "REFERENCE_FORMAT",
    "SPREAD_TRUSTED", "SUITE_FORMAT", "Case", "MachineInfo", "Measurement", "MeasurementSet", "load_measurements",
    "load_source", "parse_case", "reference_datasets", "resolve_reference", "thread_huge_fraction",
]

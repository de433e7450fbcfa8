"""The study language's names: its format, plot kinds, metrics and groups.  The case notation
itself (``FOREGROUND [+ BACKGROUND]``, named loads and subscriptions) is :mod:`simnuma.case`."""
from __future__ import annotations

import re

from ..case import LOADS_GBps, SUBSCRIPTIONS  # noqa: F401 - the study language names them
from ..model.system import DEFAULT_SIZE_BYTES  # noqa: F401 - one array size for every command

STUDY_FORMAT = "simnuma-study/1"

PLOT_KINDS = ("bars", "loads", "boards", "matrix")
METRICS = {"time": "time_ns", "latency": "latency_ns", "bandwidth": "bandwidth_GBps"}
METRIC_UNITS = {"time": "ns", "latency": "ns", "bandwidth": "GB/s"}
# A comparison counts only beyond steady mode's convergence target (95% confidence half-width of
# every thread's throughput within 1%): smaller differences are inside the simulation's noise.
NOISE_PERCENT = 1.0
MATRIX_GROUP = "matrix"   # the cases of a 'matrix' entry
ALL_GROUP = "all"         # every case of a board
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_BOARD_PREFIX = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9_.-]*)\s*:\s*(.*)$", re.S)

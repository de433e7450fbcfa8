"""Seeing inside a run (``docs/traces.md``).

* :mod:`.recorder`: the :class:`Recorder` the model calls as packets, transactions and memory requests move;
* :mod:`.perfetto`: a recorded run as a Chrome/Perfetto trace-event file (``simnuma run --trace``);
* :mod:`.timeline`: the board over simulated time as a table and figures (``simnuma run --timeline``);
* :mod:`.explain`: one miss of each thread stage by stage (``simnuma explain``).
"""
from __future__ import annotations

from .recorder import Recorder, parse_window

__all__ = ["Recorder", "parse_window"]

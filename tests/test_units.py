"""Strict parsing and exact formatting of quantities (simnuma.units)."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simnuma.topology.schema import check_value
from simnuma.units import (
    UnitError,
    format_bandwidth,
    format_frequency,
    format_size,
    format_time,
    parse_bandwidth_GBps,
    parse_frequency_GHz,
    parse_quantity,
    parse_size_bytes,
    parse_time_ns,
)


@pytest.mark.parametrize("text, kind, expected", [
    ("4 GB/s", "bandwidth", 4.0),
    ("4GB/s", "bandwidth", 4.0),
    ("752 MB/s", "bandwidth", 0.752),
    ("8.8 GB/s", "bandwidth", 8.8),
    ("60 ns", "time", 60.0),
    ("60ns", "time", 60.0),
    ("1.5 us", "time", 1500.0),
    ("1.5 \u00b5s", "time", 1500.0),  # micro sign
    ("1.5 \u03bcs", "time", 1500.0),  # Greek mu
    ("250 ps", "time", 0.25),
    (" 2e1 ns ", "time", 20.0),
    (".5 ns", "time", 0.5),
    ("1 GHz", "frequency", 1.0),
    ("2.2 GHz", "frequency", 2.2),
    ("800 MHz", "frequency", 0.8),
    ("64 MiB", "size", 64 * 2**20),
    ("64 MB", "size", 64 * 10**6),
    ("1.5 KiB", "size", 1536),
    ("64 B", "size", 64),
])
def test_quantities_parse_to_internal_units(text, kind, expected):
    assert parse_quantity(text, kind) == pytest.approx(expected, rel=1e-15)


def test_named_parsers():
    assert parse_time_ns("95 ns") == 95.0
    assert parse_bandwidth_GBps("6.4 GB/s") == 6.4
    assert parse_frequency_GHz("1 GHz") == 1.0
    assert parse_size_bytes("64 MiB") == 67108864
    assert isinstance(parse_size_bytes("1 KiB"), int)


@pytest.mark.parametrize("value", [60, 60.0, "60", " 4.5 ", "1e3"])
def test_bare_numbers_are_refused(value):
    with pytest.raises(UnitError, match="a unit is required"):
        parse_quantity(value, "time")


@pytest.mark.parametrize("text, kind", [
    ("60 nsec", "time"),
    ("60 NS", "time"),
    ("4 gb/s", "bandwidth"),
    ("4 Gbps", "bandwidth"),
    ("1 ghz", "frequency"),
    ("64 mib", "size"),
    ("4 GB/s", "time"),     # a unit of the wrong kind
    ("60 ns", "bandwidth"),
])
def test_unknown_units_are_refused_with_the_known_ones_listed(text, kind):
    with pytest.raises(UnitError, match="unknown unit") as info:
        parse_quantity(text, kind)
    assert "expected one of" in str(info.value)


@pytest.mark.parametrize("value", ["", "ns", "four ns", "4 GB/s/s", "4 4 ns", "nan ns", "inf ns", None, True,
                                   [4, "ns"], {"ns": 4}])
def test_malformed_quantities_are_refused(value):
    with pytest.raises(UnitError):
        parse_quantity(value, "time")


def test_overflow_and_fractional_bytes_are_refused():
    with pytest.raises(UnitError, match="finite"):
        parse_quantity("1e400 ns", "time")
    with pytest.raises(UnitError, match="whole number of bytes"):
        parse_quantity("0.3 B", "size")


@pytest.mark.parametrize("text", ["0 ns", "-5 ns"])
def test_board_values_must_be_positive(text):
    with pytest.raises(ValueError, match="must be positive"):
        check_value("time", text)


@pytest.mark.parametrize("kind, value, message", [
    ("int", 0, "must be positive"),
    ("int", 2.0, "positive whole number"),
    ("int", True, "positive whole number"),
    ("fraction", 1.5, r"\(0, 1\]"),
    ("fraction", 0, r"\(0, 1\]"),
    ("bool", "yes", "true or false"),
])
def test_plain_kinds(kind, value, message):
    with pytest.raises(ValueError, match=message):
        check_value(kind, value)


finite = st.floats(min_value=1e-6, max_value=1e9, allow_nan=False, allow_infinity=False)


@given(finite)
def test_time_text_reads_back_exactly(ns):
    assert parse_time_ns(format_time(ns)) == ns


@given(finite)
def test_bandwidth_text_reads_back_exactly(GBps):
    assert parse_bandwidth_GBps(format_bandwidth(GBps)) == GBps


@given(finite)
def test_frequency_text_reads_back_exactly(GHz):
    assert parse_frequency_GHz(format_frequency(GHz)) == GHz


@given(st.integers(min_value=0, max_value=2**45))
def test_size_text_reads_back_exactly(nbytes):
    assert parse_size_bytes(format_size(nbytes)) == nbytes


def test_formatting_is_short_for_round_numbers():
    assert format_time(60.0) == "60 ns"
    assert format_bandwidth(4.0) == "4 GB/s"
    assert format_size(64 * 2**20) == "64 MiB"
    assert format_size(1000) == "1000 B"

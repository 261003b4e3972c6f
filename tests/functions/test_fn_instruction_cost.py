"""Reading Cachegrind output and judging the stability of repeated counts."""

from __future__ import annotations

import pytest

from speedproof.functions.instruction_cost import (
    IrRun,
    Measurement,
    MeasurementError,
    cachegrind_wrapper,
    parse_total_ir,
)
from speedproof.functions.jobs import HarnessRun
from speedproof.functions.sandbox import Outcome

OUTPUT = (
    "desc: I1 cache: 32768 B\ncmd: python3.11 -S\nevents: Ir\nfl=a.c\nfn=f\n1 10\nsummary: 123456\n"
)


def test_the_total_is_read_from_the_summary_line() -> None:
    assert parse_total_ir(OUTPUT) == 123456


@pytest.mark.parametrize(
    "text",
    [
        OUTPUT.replace("summary: 123456\n", ""),
        OUTPUT + "summary: 1\n",
        OUTPUT.replace("events: Ir", "events: Ir Dr"),
        OUTPUT.replace("123456", "12x"),
        "",
    ],
)
def test_unreadable_cachegrind_output_is_a_measurement_error(text: str) -> None:
    with pytest.raises(MeasurementError):
        parse_total_ir(text)


def _run(ir: int) -> IrRun:
    outcome = Outcome(0, b"", b"", b"", False, None, 0.0)
    return IrRun(HarnessRun("ok", "", (), outcome), ir)


def test_counts_that_differ_between_runs_are_unstable() -> None:
    assert Measurement((_run(10), _run(10)), (_run(4), _run(4))).stable
    assert not Measurement((_run(10), _run(11)), (_run(4), _run(4))).stable
    assert not Measurement((_run(10), _run(10)), (_run(4), _run(5))).stable


def test_function_only_is_measured_minus_calibration() -> None:
    measurement = Measurement((_run(1000), _run(1000)), (_run(600), _run(600)))
    assert measurement.function_ir == 400
    assert measurement.whole_ir == 1000


def test_cachegrind_runs_without_address_randomisation_and_without_cache_simulation() -> None:
    wrapper = cachegrind_wrapper()
    assert wrapper[0] == "setarch" and wrapper[2] == "-R"
    assert "--tool=cachegrind" in wrapper and "--cache-sim=no" in wrapper

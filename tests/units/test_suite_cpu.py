"""``make test`` ends with how busy the machine's cores were: the passes' own CPU figures miss the
processes they never waited for, so the whole run's cost is read from ``/proc/stat``."""

from __future__ import annotations

import os

import pytest

from tools.test_suite import CpuClock, cpu_clock, cpu_summary

HERTZ = os.sysconf("SC_CLK_TCK")
# user nice system idle iowait irq softirq steal guest guest_nice, in clock ticks
STAT = (f"cpu  {300 * HERTZ} {10 * HERTZ} {40 * HERTZ} {500 * HERTZ} {50 * HERTZ} 0 {HERTZ} 7 0 0\n"
        "cpu0 1 2 3 4 5 6 7 8 9 10\n")


def test_busy_counts_user_nice_system_and_interrupts_and_idle_counts_waiting_for_disk():
    assert cpu_clock(STAT) == CpuClock(busy=351.0, idle=550.0)


@pytest.mark.parametrize("stat", ["", "intr 1 2 3\n", "cpu 1 2 3\n"])
def test_counters_that_are_not_there_give_none(stat):
    assert cpu_clock(stat) is None


def test_the_summary_is_the_difference_between_two_readings():
    line = cpu_summary(CpuClock(busy=100.0, idle=50.0), CpuClock(busy=1_060.0, idle=90.0))
    assert f"the machine's {os.cpu_count()} cores: 960 CPU seconds busy, 40 idle (96% busy)" in line


def test_no_reading_no_line():
    assert cpu_summary(None, CpuClock(busy=1.0, idle=1.0)) == ""


@pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="Linux only: /proc/stat")
def test_this_machine_is_read_and_its_clock_only_moves_forward():
    first = cpu_clock()
    sum(range(2_000_000))  # some CPU time to move the counters
    second = cpu_clock()
    assert first is not None and second is not None
    assert second.busy + second.idle > first.busy + first.idle
    assert second.busy >= first.busy and second.idle >= first.idle

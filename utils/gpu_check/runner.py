"""Run checks independently: whatever one raises becomes its status, never the end of the run."""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from utils.gpu_check.defaults import METRICS_WAIT_S

PASS, FAIL, SKIP, NOT_RUN = "pass", "fail", "skip", "not run"
STATUSES = (PASS, FAIL, SKIP, NOT_RUN)


class NotRun(Exception):
    """A prerequisite is missing (cudf not installed, no cluster): the check could not run."""


class Skipped(Exception):
    """The check was left out on request (e.g. ``--skip-notebooks``)."""


@dataclass
class CheckResult:
    """One check's outcome; ``reason`` explains any status other than pass."""

    name: str
    title: str
    status: str  # pass | fail | skip | not run
    seconds: float
    summary: str = ""
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Context:
    """What the checks share: the arguments and the cluster that check 1a starts."""

    args: argparse.Namespace
    expected_gpus: int = 0
    client: Any = None
    cluster: Any = None
    cluster_error: str = ""
    metrics_wait_s: float = METRICS_WAIT_S

    def require_client(self) -> Any:
        if self.client is None:
            why = self.cluster_error or "check 1a (cluster) did not start one"
            raise NotRun(f"no cluster: {why}")
        return self.client

    def release_cluster(self) -> None:
        """Close the client and the cluster this run started (an external one is left up)."""
        client, cluster = self.client, self.cluster
        self.client = self.cluster = None
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()
        if cluster is not None:
            with contextlib.suppress(Exception):
                cluster.close()


CheckFunction = Callable[["Context", dict[str, Any]], "str | None"]


@dataclass(frozen=True)
class Check:
    """A labelled check: ``func(ctx, details)`` fills ``details``, returns a one-line summary
    and raises to fail (any exception), ``NotRun`` or ``Skipped``."""

    label: str  # "1a", "2", ...
    name: str
    title: str
    func: CheckFunction


def run_check(check: Check, ctx: Context) -> CheckResult:
    """Run one check; whatever it raises is recorded, never propagated (except Ctrl-C)."""
    details: dict[str, Any] = {}
    started = time.perf_counter()
    summary, reason = "", ""
    try:
        summary = check.func(ctx, details) or ""
        status = PASS
    except Skipped as error:
        status, reason = SKIP, str(error)
    except NotRun as error:
        status, reason = NOT_RUN, str(error)
    except Exception as error:  # a failing check must not stop the others
        status, reason = FAIL, f"{type(error).__name__}: {error}".strip()
    seconds = round(time.perf_counter() - started, 3)
    return CheckResult(
        f"{check.label} {check.name}", check.title, status, seconds, summary, reason, details
    )


def run_checks(
    checks: Sequence[Check], ctx: Context, progress: Callable[[str], None] | None = None
) -> list[CheckResult]:
    """Run ``checks`` in order; ``progress`` gets a line before and after each."""
    results = []
    for number, check in enumerate(checks, 1):
        if progress:
            progress(f"[{number}/{len(checks)}] {check.label} {check.title} ...")
        result = run_check(check, ctx)
        if progress:
            note = result.summary if result.status == PASS else result.reason
            progress(f"    {result.status} ({result.seconds:.1f} s){': ' + note if note else ''}")
        results.append(result)
    return results


def exit_code(results: Sequence[CheckResult]) -> int:
    """0 when no check failed (skipped and not-run checks are reported, not failures), else 1."""
    return 1 if any(r.status == FAIL for r in results) else 0

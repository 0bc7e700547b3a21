"""The git commit a benchmark measured, for its results file ("commit").

A build writes build/source-commit.txt (cmake/SourceCommit.cmake): the commit
its sources were at, "-dirty" when they had uncommitted changes. The Python
benchmarks read it beside the bundlefit binary they run (build/bin/..), so a
README figure traces back to the code that produced it
(scripts/check-readme-figures.py).
"""
import os


def measured_commit(bundlefit_binary):
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(bundlefit_binary))),
                        "source-commit.txt")
    try:
        with open(path) as f:
            return f.readline().strip() or "unknown"
    except OSError:
        return "unknown"


def spread(values):
    """(min, max) of repeated measurements, or None: the noise a median hides."""
    return [min(values), max(values)] if values else None

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


# What benchmarks write themselves: results files, and the tables bench_cost regenerates. Changes
# there do not make a measurement "dirty"; a change to any other tracked file does.
BENCH_OUTPUTS = [":!bench/results", ":!device_db/README.md"]


def repo_commit(root):
    """HEAD of the repository at root, "-dirty" when tracked code differs from it, or "unknown"."""
    import subprocess
    try:
        root = subprocess.run(["git", "-C", root, "rev-parse", "--show-toplevel"], capture_output=True,
                              text=True, check=True).stdout.strip()
        head = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        status = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no",
                                 "--", "."] + BENCH_OUTPUTS, capture_output=True, text=True,
                                check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("-dirty" if status else "")

"""Helpers shared by the bench/cost scripts: running a tool, and the git commit a result measured."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from source_commit import repo_commit  # noqa: E402


def run(cmd, ok=(0,), merge=False, **kw):
    """stdout of `cmd` (with stderr when `merge`); raises RuntimeError naming the tool when the exit
    code is not in `ok`."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT if merge else subprocess.PIPE,
                       text=True, **kw)
    if p.returncode not in ok:
        raise RuntimeError(f"{' '.join(cmd[:4])}... failed ({p.returncode}): "
                           f"{(p.stdout + (p.stderr or '')).strip()[-600:]}")
    return p.stdout


def git_commit():
    """HEAD of the repository, with "-dirty" when tracked code differs from it."""
    return repo_commit(ROOT)

"""Helpers shared by the bench/cost scripts: running a tool, and the git commit a result measured."""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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
    """HEAD of the repository, with "-dirty" when tracked files differ from it."""
    try:
        commit = run(["git", "-C", ROOT, "rev-parse", "HEAD"]).strip()
        dirty = run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"]).strip() != ""
        return commit + ("-dirty" if dirty else "")
    except (RuntimeError, OSError):
        return "unknown"

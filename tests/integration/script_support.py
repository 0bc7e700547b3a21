"""What the integration test scripts share: run a command, check a fact."""
import subprocess
import sys


def run(argv, expect=0, env=None, cwd=None, timeout=600):
    """Runs argv, stdout and stderr together; exits FAILED unless its exit code is `expect`
    (an int or a tuple of them; None: any)."""
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                       cwd=cwd, timeout=timeout)
    allowed = expect if isinstance(expect, tuple) else (expect,)
    if expect is not None and p.returncode not in allowed:
        sys.exit(f"FAILED (exit {p.returncode}, expected {expect}): {' '.join(argv)}\n{p.stdout}")
    return p


def check(condition, message):
    if not condition:
        sys.exit("FAILED: " + message)
    print("ok:", message)

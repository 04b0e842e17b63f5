"""Where compiled kernels are kept, and for which processor they are compiled.

Two places hold compiled kernels, both read through `KernelCache`, numba's per-function
disk cache with paths relative to the package (so a cache built in one place loads in
another: numba keys an entry on the source file's content hash, the function's
bytecode, its signature and the code generator's target, never on the file's path):

- the shipped kernels, `flexmbs/_kernels/` inside an installed wheel (read only),
  compiled once when the wheel is built (`make wheel`, flexmbs.cli.precompile) for a
  generic x86-64 (or other) processor, so that they run on any machine of that
  architecture. `manifest.json` there records the numba release, Python version,
  target triple, processor and the hash of the kernel sources they were built from;
- the user cache, `$FLEXMBS_CACHE_DIR` or `~/.cache/flexmbs`, in a folder named after
  the hash of the kernel sources (`numba-<hash>`), where a process writes what it
  compiles (NUMBA_CACHE_DIR, if set, is used as that folder).

A process compiles for one processor, chosen at import before numba makes its code
generator (`choose_target`): the native processor when `flexmbs precompile --native`
measured native kernels faster on this machine and filled the user cache with them;
else the generic one, reading the shipped kernels when they fit this installation
(same numba release, Python, target and sources) and compiling what is missing into
the user cache (the first compilation says why the shipped kernels were not used). A
source checkout, the test suite and `make wheel` therefore share one set of generic
kernels. `FLEXMBS_KERNELS=native|generic` chooses; NUMBA_CPU_NAME, if set, is
numba's and is kept.

A kernel loaded from either place starts numba's reference-counting runtime only, not
numba's refresh of its compiler, which compiling does itself (`KernelCache.load_overload`),
with the runtime's own module kept compiled in the user cache; and it leaves the LLVM
module kept for linking it into later compilations unparsed until one links it
(flexmbs.runtime.cached_library). `FLEXMBS_FULL_REFRESH=1` restores numba's way, for comparison.

Processes that share a user cache compile each kernel once between them: a kernel
compiles under an exclusive lock (POSIX `flock`) on a file named after the kernel, its
argument types and the processor (`compile_lock_path`), and a process that finds the
lock held waits, then loads what the holder saved (`compile_locked`). The system lets
go of a `flock` when its process ends, so a lock file left by a killed process blocks
nobody; a process waits at most `FLEXMBS_COMPILE_WAIT` seconds (default 1800) for a
holder that is alive but stuck, then compiles the kernel itself.
"""

import contextlib
import functools
import hashlib
import json
import os
import pathlib
import sys
import time
import warnings

try:
    import fcntl
except ImportError:  # no flock (Windows): processes compile without the shared lock
    fcntl = None  # type: ignore[assignment]

import numba
from numba.core import caching

from . import cached_library

__all__ = [
    "KERNEL_MARKERS",
    "MANIFEST",
    "PACKAGE_ROOT",
    "SHIPPED_DIR",
    "KernelCache",
    "Target",
    "build_record",
    "choose_target",
    "compile_lock_path",
    "compile_locked",
    "compile_counts",
    "exclusive_file_lock",
    "native_marker_path",
    "shipped_problem",
    "source_hash",
    "user_cache_dir",
]

PACKAGE_ROOT = pathlib.Path(__file__).resolve().parent.parent
SHIPPED_DIR = PACKAGE_ROOT / "_kernels"
MANIFEST = "manifest.json"
NATIVE_MARKER = "native.json"
GENERIC_CPU = "generic"

KERNEL_MARKERS = (b"@jit", b"jit_inline", b"import numba", b"from numba")
"""A module holding any of these is compiled code (or compiles it) and enters the
hash; pure-Python modules (command line, I/O, model reading) do not, so editing them
keeps the cache."""


NOT_CODE = ("kernel_cache.py", "cached_library.py", "compile_notice.py")
"""Modules that use numba but change no compiled code (where kernels are kept, what
is said while they compile, how a cached one is loaded): left out of the hash."""


def _package_sources():
    """(path relative to the package, os.stat_result) of the package's .py files but
    NOT_CODE, sorted by path (the compiled kernels' folder left out)."""
    found = []
    for root, dirs, files in os.walk(PACKAGE_ROOT):
        dirs[:] = [d for d in dirs if d not in ("_kernels", "__pycache__")]
        for name in files:
            if name.endswith(".py") and name not in NOT_CODE:
                path = os.path.join(root, name)
                found.append(
                    (os.path.relpath(path, PACKAGE_ROOT).replace(os.sep, "/"), os.stat(path))
                )
    return sorted(found)


def source_hash():
    """sha1 (12 hex digits) of every .py file of the flexmbs package that defines or
    drives numba kernels (KERNEL_MARKERS): their paths in the package and contents.

    Reading and hashing them costs 8 ms a process, so the last result is kept in the
    user cache's parent folder (`source-hash-<package folder's hash>.json`, one for
    each installation) with the files' sizes and modification times, and used while
    they are unchanged (a folder that cannot be written only costs the hashing).
    numba checks each kernel's own source file against its cache entry in any case."""
    sources = _package_sources()
    stamp = hashlib.sha1(
        repr([(rel, st.st_size, st.st_mtime_ns) for rel, st in sources]).encode()
    ).hexdigest()
    where = hashlib.sha1(str(PACKAGE_ROOT).encode()).hexdigest()[:12]
    memo = os.path.join(_cache_base(), f"source-hash-{where}.json")
    try:
        with open(memo) as f:
            kept = json.load(f)
        if kept.get("stamp") == stamp and isinstance(kept.get("hash"), str):
            return kept["hash"]
    except (OSError, ValueError, AttributeError):
        pass
    h = hashlib.sha1()
    for rel, _ in sources:
        text = (PACKAGE_ROOT / rel).read_bytes()
        if any(k in text for k in KERNEL_MARKERS):
            h.update(rel.encode())
            h.update(text)
    found = h.hexdigest()[:12]
    cached_library.save_whole(memo, json.dumps({"stamp": stamp, "hash": found}).encode())
    return found


def _cache_base():
    """The parent folder of the user cache: $FLEXMBS_CACHE_DIR, else
    $XDG_CACHE_HOME/flexmbs, else ~/.cache/flexmbs."""
    return os.environ.get("FLEXMBS_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "flexmbs",
    )


def user_cache_dir(hash_=None):
    """The user cache folder of this package's kernel sources (module text)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return os.environ["NUMBA_CACHE_DIR"]
    return os.path.join(_cache_base(), f"numba-{hash_ or source_hash()}")


def _host_cpu():
    """(name, features) of this machine's processor as numba's code generator sees it."""
    import llvmlite.binding as ll
    from numba.core.codegen import get_host_cpu_features

    return ll.get_host_cpu_name(), get_host_cpu_features()


def build_record(cpu, features, hash_=None):
    """What a set of compiled kernels was built for (the manifest's content)."""
    import llvmlite.binding as ll

    return {
        "numba": numba.__version__,
        "python": f"{sys.version_info[0]}.{sys.version_info[1]}{getattr(sys, 'abiflags', '')}",
        "triple": ll.get_process_triple(),
        "cpu": cpu,
        "features": features,
        "source_hash": hash_ or source_hash(),
    }


_WHAT = {
    "numba": "numba {0} (this is {1})",
    "python": "Python {0} (this is {1})",
    "triple": "{0} (this machine is {1})",
    "source_hash": "kernel sources {0} (these are {1})",
}


def _record_mismatch(record, wanted):
    """A phrase naming the first field where `record` differs from `wanted`, or None."""
    for field, text in _WHAT.items():
        if record.get(field) != wanted[field]:
            return text.format(record.get(field), wanted[field])
    return None


def shipped_problem(hash_=None):
    """None when the shipped kernels fit this installation, else a sentence saying
    why they cannot be used."""
    path = SHIPPED_DIR / MANIFEST
    if not path.is_file():
        return "this installation carries no compiled kernels (a wheel built by `make wheel` does)"
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        return f"the shipped kernels' manifest cannot be read ({exc})"
    mismatch = _record_mismatch(record, build_record(GENERIC_CPU, "", hash_))
    if mismatch:
        return f"the shipped kernels were compiled for {mismatch}"
    return None


def native_marker_path(cache_dir=None):
    return os.path.join(cache_dir or user_cache_dir(), NATIVE_MARKER)


def _native_precompiled(cache_dir, hash_):
    """True when `flexmbs precompile --native` filled `cache_dir` on this machine."""
    try:
        with open(native_marker_path(cache_dir)) as f:
            record = json.load(f)
    except (OSError, ValueError):
        return False
    cpu, features = _host_cpu()
    wanted = build_record(cpu, features, hash_)
    return _record_mismatch(record, wanted) is None and (record["cpu"], record["features"]) == (
        cpu,
        features,
    )


class Target:
    """The processor this process compiles for and where its kernels come from.

    kind: "native" or "generic" (or numba's NUMBA_CPU_NAME when set); shipped: the
    shipped kernels are read; why: a sentence for the first compilation when the
    shipped kernels are not used (None when they are, or there is nothing to say).
    """

    def __init__(self, kind, shipped, why):
        self.kind, self.shipped, self.why = kind, shipped, why

    def __repr__(self):
        return f"Target({self.kind!r}, shipped={self.shipped}, why={self.why!r})"


def _codegen_made():
    from numba.core.registry import cpu_target

    return "target_context" in vars(cpu_target)


def choose_target(cache_dir, hash_):
    """Decide this process's Target (module text) and set numba's processor for it.
    Must run before numba makes its code generator (the first compiled function)."""
    shipped_why = shipped_problem(hash_)
    forced = os.environ.get("FLEXMBS_KERNELS", "").strip().lower()
    if os.environ.get("NUMBA_CPU_NAME"):
        name = os.environ["NUMBA_CPU_NAME"]
        usable = name.lower() == GENERIC_CPU and shipped_why is None
        return Target(name, usable, None if usable else shipped_why)
    if _codegen_made():  # another library compiled with numba before flexmbs
        return Target("native", False, "numba was already compiling for this processor")
    if forced not in ("", "native", "generic"):
        warnings.warn(
            f"FLEXMBS_KERNELS={forced!r} is not native or generic: ignored",
            RuntimeWarning,
            stacklevel=3,
        )
        forced = ""
    if forced == "native" or (not forced and _native_precompiled(cache_dir, hash_)):
        return Target("native", False, "FLEXMBS_KERNELS=native" if forced else None)
    numba.config.CPU_NAME = GENERIC_CPU  # type: ignore[attr-defined]
    numba.config.CPU_FEATURES = ""  # type: ignore[attr-defined]
    return Target(GENERIC_CPU, shipped_why is None, shipped_why)


@functools.cache
def _relative_folder(py_file):
    """The folder of `py_file` relative to the package ("_" for the package's own),
    or None for a file outside it (asked once a file: every kernel of a module asks)."""
    try:
        rel = pathlib.Path(py_file).resolve().parent.relative_to(PACKAGE_ROOT)
    except ValueError:
        return None
    return rel.as_posix() if rel.parts else "_"


class _PackageLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """numba's cache locator for a flexmbs kernel: the user cache folder, then the
    kernel's module folder relative to the package."""

    root = None  # set by flexmbs.runtime.config

    def __init__(self, py_func, py_file, rel):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self.relative = rel
        self._cache_path = os.path.join(self.root, rel)

    def get_cache_path(self):
        return self._cache_path

    @classmethod
    def from_function(cls, py_func, py_file):
        rel = _relative_folder(py_file)
        if rel is None or not os.path.exists(py_file):
            return None
        return cls(py_func, py_file, rel)  # the folder is made when something is saved


class _Impl(caching.CompileResultCacheImpl):
    _locator_classes = [_PackageLocator]  # type: ignore[list-item]


_LIGHT_LOAD = os.environ.get("FLEXMBS_FULL_REFRESH", "0") in ("0", "")


class KernelCache(caching.FunctionCache):
    """numba's per-function cache over the shipped kernels (read first, when the
    process's Target reads them) and the user cache (read, and written with what
    compiles). A user cache that cannot be written warns once; the run goes on."""

    _impl_class = _Impl
    shipped = False  # set by flexmbs.runtime.config from the Target
    _unwritable_said = False

    def __init__(self, py_func):
        super().__init__(py_func)
        self._shipped_file = None
        if self.shipped:
            self._shipped_file = caching.IndexDataCacheFile(
                cache_path=str(SHIPPED_DIR / self._impl.locator.relative),
                filename_base=self._impl.filename_base,
                source_stamp=self._impl.locator.get_source_stamp(),
            )

    def load_overload(self, sig, target_context):
        """numba's, without its refresh of the target context before loading: the
        refresh imports and installs the implementations of everything numba can
        compile (half a second, as long as importing numba), which only compiling
        needs (numba's compiler refreshes the context itself). Loading compiled code
        needs numba's reference-counting runtime, started here with its own module
        read from the user cache (flexmbs.runtime.cached_library.start_runtime)."""
        if not _LIGHT_LOAD:
            return super().load_overload(sig, target_context)
        cached_library.start_runtime(target_context, _PackageLocator.root)
        return self._load_overload(sig, target_context)

    def _load_overload(self, sig, target_context):
        if not self._enabled:
            return None
        key = self._index_key(sig, target_context.codegen())
        data = self._shipped_file.load(key) if self._shipped_file is not None else None
        if data is None:
            try:
                data = self._cache_file.load(key)
            except OSError:  # no cache folder there (a file in the way): compile
                data = None
        if data is not None:
            if _LIGHT_LOAD:
                cached_library.use_in(target_context.codegen())
            data = self._impl.rebuild(target_context, data)
        return data

    def holds(self, sig, target_context):
        """True when the shipped kernels or the user cache hold the function compiled
        for `sig` and this process's code generator (a look at the indexes only)."""
        if not self._enabled:
            return False
        key = self._index_key(sig, target_context.codegen())
        files = [self._cache_file]
        if self._shipped_file is not None:
            files.append(self._shipped_file)
        for f in files:
            try:
                if key in f._load_index():
                    return True
            except OSError:
                pass
        return False

    def _save_overload(self, sig, data):
        try:
            super()._save_overload(sig, data)
        except OSError as exc:
            if not KernelCache._unwritable_said:
                KernelCache._unwritable_said = True
                warnings.warn(
                    f"the kernel cache folder {self._cache_path} cannot be written "
                    f"({exc.strerror}): kernels compile again in the next run "
                    "(FLEXMBS_CACHE_DIR chooses another folder)",
                    RuntimeWarning,
                    stacklevel=2,
                )


def attach(dispatcher):
    """`dispatcher` (a numba.njit function) with its disk cache a KernelCache, for a
    kernel of the package; numba's own cache (in the user cache folder, numba's
    CACHE_DIR) for a function elsewhere compiled with flexmbs' settings."""
    import inspect

    if _relative_folder(inspect.getfile(dispatcher.py_func)) is None:
        dispatcher.enable_caching()
    else:
        dispatcher._cache = KernelCache(dispatcher.py_func)
        dispatcher.compile = compile_locked(dispatcher)
    return dispatcher


LOCK_WAIT = float(os.environ.get("FLEXMBS_COMPILE_WAIT") or 1800.0)
"""Seconds a process waits for another that holds a kernel's compile lock, before it
compiles the kernel itself (a holder that is alive but stopped)."""

_POLL = 0.02  # s between two tries of a held lock

compile_counts = {"waits": 0, "wait_seconds": 0.0, "timeouts": 0}
"""This process's waits for kernels another process was compiling: how many, their
total seconds, and how many gave up after LOCK_WAIT and compiled."""

_held_paths: set = set()  # lock files this process holds (taken again freely)
_wait_said = [False]


def _lock_holder(fd):
    """The process id recorded in an open lock file, or None."""
    try:
        return int(os.pread(fd, 20, 0).decode().strip() or "x")
    except (OSError, ValueError):
        return None


@contextlib.contextmanager
def exclusive_file_lock(path, wait, what="a kernel"):
    """Hold an exclusive `flock` on the file `path` (made if missing) while entered,
    waiting at most `wait` seconds for another process that holds it. Yields True when
    held; False when it was not taken (no flock on this system or file system, the
    folder cannot be written, or the wait ran out): the caller goes on without it. A
    path this process already holds is entered again at once. The lock file records
    its holder's process id; the lock itself goes with the holder's process."""
    if path in _held_paths:
        yield True
        return
    if fcntl is None:
        yield False
        return
    try:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except FileNotFoundError:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield False
        return
    try:
        held = _take_lock(fd, wait, what)
        if held:
            _held_paths.add(path)
            with contextlib.suppress(OSError):  # fixed width: truncating costs a flush
                os.pwrite(fd, f"{os.getpid():<20}".encode(), 0)
        try:
            yield held
        finally:
            _held_paths.discard(path)
    finally:
        os.close(fd)  # lets the lock go


def _take_lock(fd, wait, what):
    start = time.perf_counter()
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            waited = time.perf_counter() - start
            if waited >= wait:
                compile_counts["timeouts"] += 1
                return False
            if waited > 2.0 and not _wait_said[0]:
                _wait_said[0] = True
                sys.stderr.write(
                    f"flexmbs: waiting for process {_lock_holder(fd)}, which compiles "
                    f"{what} into the same cache (at most {wait:.0f} s)\n"
                )
            time.sleep(_POLL)
        except OSError:  # no flock on this file system
            return False
    waited = time.perf_counter() - start
    if waited > _POLL / 2:
        compile_counts["waits"] += 1
        compile_counts["wait_seconds"] += waited
    return True


def compile_lock_path(dispatcher, args):
    """The lock file of compiling `dispatcher` for the argument types `args` with this
    process's code generator: in the kernel's cache folder, named after the kernel and
    a hash of the types and the processor."""
    cache = dispatcher._cache
    key = repr((tuple(args), dispatcher.targetctx.codegen().magic_tuple()))
    digest = hashlib.sha1(key.encode()).hexdigest()[:16]
    return os.path.join(cache._cache_path, f"{cache._impl.filename_base}.{digest}.lock")


def compile_locked(dispatcher):
    """`dispatcher.compile` (find the compiled code for a signature in memory, on disk,
    else compile it and save it) entered under the signature's lock
    (`exclusive_file_lock`), so that of the processes needing one kernel at once one
    compiles it and the others load it. A signature in memory or in the cache is
    loaded without the lock (no file is written on the way of a warm run). numba's
    compiler lock (one per process) is taken first: threads of a process queue there,
    never on each other's file locks."""
    from numba.core import sigutils
    from numba.core.compiler_lock import global_compiler_lock

    unlocked = dispatcher.compile

    def compile(sig):
        args, _ = sigutils.normalize_signature(sig)
        if tuple(args) in dispatcher.overloads:
            return unlocked(sig)
        with global_compiler_lock:
            if dispatcher._cache.holds(tuple(args), dispatcher.targetctx):
                return unlocked(sig)
            path = compile_lock_path(dispatcher, args)
            with exclusive_file_lock(path, LOCK_WAIT, dispatcher.py_func.__qualname__):
                return unlocked(sig)

    return compile


def kernel_modules():
    """Names of the package's modules that hold kernels (KERNEL_MARKERS), found on
    disk: whatever kernels exist when this runs."""
    names = []
    for p in sorted(PACKAGE_ROOT.rglob("*.py")):
        if any(k in p.read_bytes() for k in KERNEL_MARKERS):
            parts = p.relative_to(PACKAGE_ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            names.append(".".join(("flexmbs", *parts)))
    return names


def kernel_dispatchers():
    """{qualified name: dispatcher} of every compiled function defined in the package's
    kernel modules (imported here; a module whose optional dependency is missing is
    left out)."""
    import importlib

    from numba.core.registry import CPUDispatcher

    found = {}
    for name in kernel_modules():
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        for attr in vars(module).values():
            if isinstance(attr, CPUDispatcher) and attr.py_func.__module__ == name:
                found[f"{name}.{attr.py_func.__qualname__}"] = attr
    return found


def is_inlined(dispatcher):
    """True for a kernel numba inlines into its callers (config.jit_inline): it has no
    compiled code of its own to keep."""
    return dispatcher.targetoptions.get("inline", "never") == "always"


def cached_for_this_target(dispatcher):
    """True when the disk cache (shipped or user) holds `dispatcher` compiled for this
    process's code generator."""
    from numba.core.registry import cpu_target

    cache = dispatcher._cache
    if not isinstance(cache, KernelCache):
        return False
    magic = cpu_target.target_context.codegen().magic_tuple()
    files = [cache._cache_file]
    if cache._shipped_file is not None:
        files.append(cache._shipped_file)
    return any(key[1] == magic for f in files for key in f._load_index())


def is_package_folder(relative):
    """True when `relative`, a folder of a kernel cache relative to its root, holds the
    package's own kernels ("_" for the package's top level, else the path of one of its
    subpackages); the cache also holds functions of other modules compiled with the
    package's settings (a user law, a test), in folders named after their files."""
    return relative == "_" or (PACKAGE_ROOT / relative).is_dir()


def read_index(path):
    """(numba release, source stamp, {key: data file}) of the cache index at `path`, or
    None when this process cannot read it: a key names a type of a module that is not
    importable here (a package kernel compiled by a test for the test's own tuple)."""
    import pickle

    with open(path, "rb") as f:
        version = pickle.load(f)
        try:
            stamp, overloads = pickle.loads(f.read())
        except (ImportError, AttributeError):
            return None
    return version, stamp, overloads


def copy_entries(source, into, cpu, skipped=None):
    """Copy the package's cache entries compiled for processor `cpu` from the cache
    folder `source` into the cache folder `into` (same layout), adding them to the
    entries already there for the same source; entries of other modules stay behind
    (is_package_folder), and so does an index this process cannot read (read_index),
    its path appended to the list `skipped` when given. Returns (functions, bytes of
    compiled code) copied."""
    import glob
    import shutil

    functions, size = 0, 0
    for index in sorted(glob.glob(os.path.join(source, "**", "*.nbi"), recursive=True)):
        if not is_package_folder(os.path.relpath(os.path.dirname(index), source)):
            continue
        read = read_index(index)
        if read is None:
            if skipped is not None:
                skipped.append(index)
            continue
        version, stamp, overloads = read
        kept = {k: v for k, v in overloads.items() if k[1][1] == cpu}
        if not kept or version != numba.__version__:
            continue
        folder = os.path.join(into, os.path.relpath(os.path.dirname(index), source))
        os.makedirs(folder, exist_ok=True)
        base = os.path.basename(index)[: -len(".nbi")]
        target = caching.IndexDataCacheFile(folder, base, stamp)
        merged = target._load_index()  # {} when absent or for other sources
        used = set(merged.values())
        number = 0
        for key, name in kept.items():
            number += 1
            while target._data_name(number) in used:
                number += 1
            new = target._data_name(number)
            shutil.copyfile(os.path.join(os.path.dirname(index), name), os.path.join(folder, new))
            size += os.path.getsize(os.path.join(folder, new))
            merged[key] = new
        target._save_index(merged)
        functions += 1
    return functions, size

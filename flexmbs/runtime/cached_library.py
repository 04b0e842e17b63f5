"""A numba code library, loaded from a kernel cache, that reads its LLVM module only
when a compilation links it.

numba caches a kernel as its machine code plus the LLVM bitcode of the kernel and every
function it calls, the second kept so that a later compilation calling the kernel can
link and inline it. numba's loader parses that bitcode (and lists the symbols it
defines) as it loads the kernel: for a run's nine kernels, 0.15 s of the 0.25 s that
loading them took, and a run that compiles nothing never uses it. `LinkOnDemandLibrary` keeps the
bitcode as bytes and parses it the first time a compilation asks for the module to
link; the machine code is loaded as numba loads it (its object cache hands the code to
LLVM's JIT when the empty module standing for it is finalized).

`use_in(codegen)` makes a JIT code generator create its libraries with this class:
libraries it compiles behave as numba's own (they have no kept bitcode).

`start_runtime(context, folder)` starts numba's reference-counting runtime as
`rtsys.initialize` does, except that the runtime's own small LLVM module (atomic
reference counts, compiled by LLVM in every process: 30 ms) is read from `folder`
as machine code when a process for the same numba, llvmlite and processor saved it
there, and saved there when it is compiled.
"""

import hashlib
import os
import pickle

import llvmlite
import numba
from llvmlite import binding as ll
from numba.core.codegen import JITCodeLibrary

__all__ = ["LinkOnDemandLibrary", "runtime_file", "save_whole", "start_runtime", "use_in"]


class LinkOnDemandLibrary(JITCodeLibrary):
    """numba's JITCodeLibrary; a library unserialized from its object code keeps its
    linking module's bitcode unparsed until `_get_module_for_linking` needs it."""

    _link_bitcode = None  # bytes of the linking module, until it is parsed

    @classmethod
    def _unserialize(cls, codegen, state):
        name, kind, data = state
        if kind != "object":
            return super()._unserialize(codegen, state)
        object_code, link_bitcode = data
        self = codegen.create_library(name)
        if not isinstance(self, cls):  # a code generator that makes other libraries
            return super()._unserialize(codegen, state)
        self.enable_object_caching()
        self._set_compiled_object(object_code)
        self._link_bitcode = link_bitcode
        self._finalize_final_module()
        return self

    @property
    def links_on_demand(self):
        """True while the linking module has not been parsed."""
        return self._link_bitcode is not None

    def _get_module_for_linking(self):
        if self._link_bitcode is not None:
            module = ll.parse_bitcode(self._link_bitcode)
            self._link_bitcode = None
            self._shared_module = module
            self._codegen._engine._load_defined_symbols(module)
        return super()._get_module_for_linking()

    def serialize_using_object_code(self):
        if self._link_bitcode is not None:
            return (self.name, "object", (self._get_compiled_object(), self._link_bitcode))
        return super().serialize_using_object_code()

    def get_pointer_to_function(self, name):
        """The address of the function `name` (0 when nothing defines it). While the
        linking module is unparsed the engine has not listed this library's symbols,
        so the JIT's own symbol table answers."""
        if self._link_bitcode is None:
            return super().get_pointer_to_function(name)
        self._ensure_finalized()
        return self._codegen._engine.get_function_address(name)


def use_in(codegen):
    """Make the JIT code generator `codegen` create LinkOnDemandLibrary libraries
    (once; a code generator of another kind is left as it is)."""
    if codegen._library_class is JITCodeLibrary:
        codegen._library_class = LinkOnDemandLibrary
    return codegen


def runtime_file(codegen, folder):
    """The file under `folder` for numba's runtime module compiled by `codegen`:
    named after the numba and llvmlite releases and the code generator's target
    triple, processor and features."""
    key = repr((numba.__version__, llvmlite.__version__, codegen.magic_tuple()))
    return os.path.join(folder, f"nrt-{hashlib.sha1(key.encode()).hexdigest()[:16]}.bin")


def start_runtime(context, folder):
    """numba's `rtsys.initialize(context)` (once a process), with the runtime's module
    loaded from `runtime_file` when it is there and saved there when it compiles
    (written whole or not at all; a folder that cannot be written only costs the
    compilation next time)."""
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.runtime import _nrt_python, nrtdynmod, rtsys

    if rtsys._init:
        return
    with global_compiler_lock:
        if rtsys._init:
            return
        if numba.config.NRT_STATS:
            _nrt_python.memsys_enable_stats()
        for py_name, address in _nrt_python.c_helpers.items():
            ll.add_symbol(py_name if py_name.startswith("_") else "NRT_" + py_name, address)
        codegen = use_in(context.codegen())
        path = runtime_file(codegen, folder) if folder else None
        state = None
        if path is not None:
            try:
                with open(path, "rb") as f:
                    state = pickle.load(f)
            except (OSError, pickle.UnpicklingError, EOFError, ValueError):
                state = None
        if isinstance(state, tuple) and len(state) == 3 and state[0] == "nrt":
            library = codegen.unserialize_library(state)
        else:
            module, library = nrtdynmod.create_nrt_module(context)  # compile_nrt_functions,
            library.enable_object_caching()  # keeping the machine code to save
            library.add_ir_module(module)
            library.finalize()
            if path is not None:
                save_whole(path, pickle.dumps(library.serialize_using_object_code()))
        rtsys._library = library
        rtsys._init = True


def save_whole(path, data):
    """Write `data` to `path` through a temporary file renamed over it."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass

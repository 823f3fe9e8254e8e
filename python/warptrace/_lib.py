"""ctypes bindings of warptrace's C API (capi/warptrace.h) in libwarptrace.so, next to this file.

Everything here is private to the package: the public functions live in ``warptrace`` and
``warptrace.mosaic``. ctypes releases the GIL for the duration of every call into the library.
Pure Python, so one wheel serves every CPython >= 3.9 and PyPy.
"""

import ctypes as _ct
import json as _json
import os as _os
import signal as _signal
import sys as _sys
import threading as _threading

_HERE = _os.path.dirname(_os.path.abspath(__file__))
_LIBRARY = _os.path.join(_HERE, "libwarptrace.so")


def _load():
    try:
        return _ct.CDLL(_LIBRARY)
    except OSError as e:
        raise ImportError(
            f"warptrace cannot load its library {_LIBRARY}: {e} (warptrace runs on x86-64 "
            "Linux with glibc; reinstall the wheel if the file is missing)") from e


_lib = _load()

_c_char_pp = _ct.POINTER(_ct.c_char_p)
_void_pp = _ct.POINTER(_ct.c_void_p)
_size_p = _ct.POINTER(_ct.c_size_t)
_err_pp = _ct.POINTER(_ct.c_void_p)


def _sig(name, restype, *argtypes):
    fn = getattr(_lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


_version = _sig("warptrace_version", _ct.c_char_p)
_c_api_version = _sig("warptrace_c_api_version", _ct.c_int)
_error_code = _sig("warptrace_error_code", _ct.c_int, _ct.c_void_p)
_error_message = _sig("warptrace_error_message", _ct.c_char_p, _ct.c_void_p)
_code_name = _sig("warptrace_code_name", _ct.c_char_p, _ct.c_int)
_error_free = _sig("warptrace_error_free", None, _ct.c_void_p)
_free = _sig("warptrace_free", None, _ct.c_void_p)
_layout_from_json = _sig("warptrace_layout_from_json", _ct.c_int, _ct.c_char_p, _ct.c_size_t,
                         _void_pp, _err_pp)
_layout_load = _sig("warptrace_layout_load", _ct.c_int, _ct.c_char_p, _void_pp, _err_pp)
_layout_to_json = _sig("warptrace_layout_to_json", _ct.c_int, _ct.c_void_p, _void_pp, _err_pp)
_layout_buffer_bytes = _sig("warptrace_layout_buffer_bytes", _ct.c_uint64, _ct.c_void_p)
_layout_free = _sig("warptrace_layout_free", None, _ct.c_void_p)
_dump_ex = _sig("warptrace_dump_ex", _ct.c_int, _ct.c_void_p, _ct.c_void_p, _ct.c_size_t,
                _ct.c_char_p, _void_pp, _void_pp, _size_p, _err_pp)
_dump_settings = _sig("warptrace_dump_settings", _ct.c_void_p)
_dump_prefix = _sig("warptrace_dump_prefix", _ct.c_int, _ct.c_char_p, _ct.c_char_p, _void_pp,
                    _err_pp)
_dump_mosaic = _sig("warptrace_dump_mosaic", _ct.c_int, _ct.c_char_p, _ct.c_void_p,
                    _ct.c_size_t, _ct.c_char_p, _void_pp, _void_pp, _size_p, _err_pp)
_what_if = _sig("warptrace_what_if", _ct.c_int, _ct.c_char_p, _ct.c_char_p, _void_pp, _err_pp)
_diff = _sig("warptrace_diff", _ct.c_int, _ct.c_char_p, _ct.c_char_p, _ct.c_char_p, _void_pp,
             _err_pp)

# Cancellation (warptrace_set_cancel_check): during a dump on the main thread, SIGINT is
# caught by _record_signal, which only notes it; the library asks _check_signals every few
# milliseconds (ctypes takes the GIL for it, and running its bytecode lets the interpreter
# run the pending handler), the dump stops, and the SIGINT handler that was in place is then
# called as Python would have called it (the default one raises KeyboardInterrupt).
_CANCEL_CHECK = _ct.CFUNCTYPE(_ct.c_int, _ct.c_void_p)
_set_cancel_check = _sig("warptrace_set_cancel_check", None, _CANCEL_CHECK, _ct.c_void_p)
_NO_CHECK = _ct.cast(None, _CANCEL_CHECK)
_signals_seen = []  # (signum, frame) caught during the current dump


def _record_signal(signum, frame):
    _signals_seen.append((signum, frame))


def _check_signals(_data):
    return 1 if _signals_seen else 0


_CHECK = _CANCEL_CHECK(_check_signals)


def _interruptible(call, *args):
    """(call(*args), a function to call once the library's results are freed: the SIGINT
    handler for the signal that stopped the dump, or None)."""
    if _threading.current_thread() is not _threading.main_thread():
        return call(*args), None  # Python runs signal handlers on the main thread only
    previous = _signal.getsignal(_signal.SIGINT)
    if not callable(previous):  # SIG_IGN, SIG_DFL, or set outside Python: left alone
        return call(*args), None
    del _signals_seen[:]
    _signal.signal(_signal.SIGINT, _record_signal)
    _set_cancel_check(_CHECK, None)
    try:
        code = call(*args)
    finally:
        _set_cancel_check(_NO_CHECK, None)
        _signal.signal(_signal.SIGINT, previous)
    if not _signals_seen:
        return code, None
    seen = _signals_seen[0]
    del _signals_seen[:]
    return code, lambda: previous(*seen)


VERSION = _version().decode()
C_API_VERSION = _c_api_version()


def _encode(s):
    return s.encode("utf-8", "surrogateescape")


def _take_string(p):
    """The library's malloc'd string as str, freed."""
    if not p.value:
        return None
    try:
        return _ct.string_at(p.value).decode("utf-8", "replace")
    finally:
        _free(p)


def _take_bytes(p, n):
    if not p.value:
        return b""
    try:
        return _ct.string_at(p.value, n.value)
    finally:
        _free(p)


def _take_error(e):
    """(code name, message) of an error handle, freed; None for none."""
    if not e.value:
        return None
    try:
        return (_code_name(_error_code(e)).decode(),
                _error_message(e).decode("utf-8", "replace"))
    finally:
        _error_free(e)


# ---- buffers --------------------------------------------------------------------------

def _dtype_name(typestr):
    kinds = {"u": "uint", "i": "int", "f": "float", "c": "complex", "b": "bool"}
    kind, size = typestr[1:2], typestr[2:]
    if kind in kinds and size.isdigit():
        return "bool" if kind == "b" else f"{kinds[kind]}{int(size) * 8}"
    named = {"M": "datetime64", "m": "timedelta64", "O": "object", "S": "bytes",
             "U": "str", "V": "void"}
    if kind in named:
        return f"{named[kind]} ({typestr})"
    return typestr


_ACCEPTED = ("pass the trace words as uint32 (numpy.uint32, jnp.uint32, torch.int32) or "
             "their bytes as uint8")


def _from_array_interface(obj, ai):
    typestr = ai["typestr"]
    kind, size = typestr[1:2], typestr[2:]
    # "<M8[ns]" (datetime64), "<m8[us]": a unit after the size; only integers are accepted.
    itemsize = int(size) if size.isdigit() else 0
    if kind not in ("u", "i") or itemsize not in (1, 4):
        raise TypeError(f"the buffer's dtype is {_dtype_name(typestr)}, not a 32-bit or 8-bit "
                        f"integer: {_ACCEPTED}")
    order = typestr[0]
    if itemsize == 4 and (order == ">" or (order == "=" and _sys.byteorder == "big")):
        raise ValueError(
            f"the buffer is big-endian ({typestr}): trace words are little-endian uint32; "
            "pass buffer.astype('<u4')")
    shape = tuple(ai["shape"])
    strides = ai.get("strides")
    n = 1
    for d in shape:
        n *= d
    if strides is not None and n > 1:
        expected = itemsize
        for axis in range(len(shape) - 1, -1, -1):
            if shape[axis] != 1 and strides[axis] != expected:
                raise ValueError(
                    f"the buffer is not C-contiguous (axis {axis} has stride {strides[axis]} "
                    f"bytes, contiguous would be {expected}): pass numpy.ascontiguousarray("
                    "buffer) so it can be read in place")
            expected *= shape[axis]
    data = ai.get("data")
    if data is None:
        return _from_buffer_protocol(obj)
    address = data[0] if isinstance(data, tuple) else None
    if address is None:
        return _from_buffer_protocol(obj)
    return address, n * itemsize, obj


def _from_buffer_protocol(obj):
    try:
        view = memoryview(obj)
    except TypeError:
        raise TypeError(
            f"the buffer must be host memory with the buffer protocol, __array_interface__ or "
            f"DLPack (a numpy array, a CPU JAX or torch array, bytes), not "
            f"{type(obj).__name__}") from None
    fmt = view.format.lstrip("@=<")
    if view.format.startswith(">") and view.itemsize == 4:
        raise ValueError("the buffer is big-endian: trace words are little-endian uint32")
    if fmt not in ("B", "b", "c", "I", "i", "L", "l") or view.itemsize not in (1, 4):
        raise TypeError(f"the buffer's item format is {view.format!r} ({view.itemsize} bytes), "
                        f"not a 32-bit or 8-bit integer: {_ACCEPTED}")
    if not view.c_contiguous:
        raise ValueError("the buffer is not C-contiguous: pass a contiguous copy so it can be "
                         "read in place")
    if view.nbytes == 0:
        return 0, 0, view
    if not view.readonly:
        arr = (_ct.c_char * view.nbytes).from_buffer(view.cast("B"))
        return _ct.addressof(arr), view.nbytes, (view, arr)
    if isinstance(obj, bytes):
        p = _ct.c_char_p(obj)  # CPython: the bytes' own storage, no copy
        return _ct.cast(p, _ct.c_void_p).value, len(obj), (obj, p)
    try:
        import numpy
    except ImportError:
        copy = bytearray(view)  # read-only foreign buffer without numpy: one copy
        return _from_buffer_protocol(copy)
    arr = numpy.frombuffer(view, dtype=numpy.uint8)
    return arr.__array_interface__["data"][0], view.nbytes, (view, arr)


def buffer_address(obj):
    """(address, bytes, keep-alive) of a host buffer, read in place, or TypeError/ValueError
    in Python's terms (dtype names, what to pass instead)."""
    address, nbytes, keep = _buffer_address(obj)
    if nbytes % 4 != 0:
        raise ValueError(f"the buffer has {nbytes} bytes, not a whole number of 32-bit words")
    if nbytes and address % 4 != 0:
        raise ValueError("the buffer's memory is not 4-byte aligned: pass a copy "
                         "(numpy.array(buffer))")
    return address, nbytes, keep


def _buffer_address(obj):
    ai = getattr(obj, "__array_interface__", None)
    if isinstance(ai, dict):
        return _from_array_interface(obj, ai)
    if hasattr(obj, "__dlpack__") and not isinstance(obj, (bytes, bytearray, memoryview)):
        device = getattr(obj, "__dlpack_device__", None)
        if device is not None:
            kind = device()[0]
            if int(kind) not in (1, 3):  # kDLCPU, kDLCUDAHost
                raise TypeError(
                    "the buffer lives on a device (DLPack device type "
                    f"{int(kind)}), not in host memory: copy it to the host first "
                    "(numpy.asarray, jax.device_get, tensor.cpu())")
        try:
            import numpy
        except ImportError:
            raise TypeError("reading a DLPack array needs numpy: pip install numpy, or pass "
                            "bytes / a buffer-protocol object") from None
        try:
            arr = numpy.from_dlpack(obj)
        except (TypeError, BufferError, RuntimeError) as e:
            raise TypeError(f"the buffer cannot be read through DLPack: {e}") from e
        address, n, _ = _from_array_interface(arr, arr.__array_interface__)
        return address, n, (obj, arr)
    return _from_buffer_protocol(obj)


# ---- calls ------------------------------------------------------------------------------

def _request(options):
    return _encode(_json.dumps(options))


_settings_specs = None


def dump_settings():
    """The library's dump settings (warptrace_dump_settings), by key: each a dict with "type"
    ("string", "bool", "integer"), "default", "min", "max", "cli_flag" and "doc"."""
    global _settings_specs
    if _settings_specs is None:
        address = _dump_settings()
        if not address:
            raise MemoryError("warptrace_dump_settings: out of memory")
        try:
            text = _ct.string_at(address).decode()
        finally:
            _free(address)
        _settings_specs = {spec["key"]: spec for spec in _json.loads(text)}
    return _settings_specs


def _outcome(code, result, error, trace=None, lazy=False):
    """{"error": (code name, message) or None, "result": dict or None, "trace": bytes}; with
    `lazy`, a success's result is left as its JSON, "text", for the caller to read when used."""
    text = _take_string(result)
    if lazy and code == 0:
        return {"error": None, "result": None, "text": text, "trace": trace}
    return {"error": _take_error(error) if code != 0 else None,
            "result": _json.loads(text) if text else None,
            "trace": trace}


class Layout:
    """An owned warptrace_layout handle."""

    def __init__(self, handle):
        self._handle = handle

    def __del__(self):
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            _layout_free(handle)

    @property
    def handle(self):
        return self._handle


def layout_from_json(text):
    data = _encode(text)
    h, e = _ct.c_void_p(), _ct.c_void_p()
    code = _layout_from_json(data, len(data), _ct.byref(h), _ct.byref(e))
    return (Layout(h.value), None) if code == 0 else (None, _take_error(e))


def layout_load(path):
    h, e = _ct.c_void_p(), _ct.c_void_p()
    code = _layout_load(_encode(path), _ct.byref(h), _ct.byref(e))
    return (Layout(h.value), None) if code == 0 else (None, _take_error(e))


def layout_to_json(layout):
    p, e = _ct.c_void_p(), _ct.c_void_p()
    code = _layout_to_json(layout.handle, _ct.byref(p), _ct.byref(e))
    if code != 0:
        return None, _take_error(e)
    return _take_string(p), None


def layout_buffer_bytes(layout):
    return int(_layout_buffer_bytes(layout.handle))


def dump_words(layout, address, nbytes, options):
    r, t, n, e = _ct.c_void_p(), _ct.c_void_p(), _ct.c_size_t(), _ct.c_void_p()
    code, interrupt = _interruptible(_dump_ex, layout.handle, address, nbytes,
                                     _request(options), _ct.byref(r), _ct.byref(t),
                                     _ct.byref(n), _ct.byref(e))
    trace = _take_bytes(t, n) if options.get("output_memory") else None
    outcome = _outcome(code, r, e, trace, lazy=True)  # frees what the library returned
    if interrupt is not None:
        interrupt()  # KeyboardInterrupt, unless a handler of the caller's says otherwise
    return outcome


def dump_prefix(prefix, options):
    r, e = _ct.c_void_p(), _ct.c_void_p()
    code, interrupt = _interruptible(_dump_prefix, _encode(prefix), _request(options),
                                     _ct.byref(r), _ct.byref(e))
    outcome = _outcome(code, r, e, lazy=True)
    if interrupt is not None:
        interrupt()
    return outcome


def dump_mosaic(spec, address, nbytes, options):
    r, t, n, e = _ct.c_void_p(), _ct.c_void_p(), _ct.c_size_t(), _ct.c_void_p()
    code, interrupt = _interruptible(_dump_mosaic, _encode(_json.dumps(spec)), address, nbytes,
                                     _request(options), _ct.byref(r), _ct.byref(t),
                                     _ct.byref(n), _ct.byref(e))
    trace = _take_bytes(t, n) if options.get("output_memory") else None
    outcome = _outcome(code, r, e, trace, lazy=True)
    if interrupt is not None:
        interrupt()
    return outcome


def diff(before, after, options):
    r, e = _ct.c_void_p(), _ct.c_void_p()
    code = _diff(_encode(before), _encode(after), _request(options), _ct.byref(r),
                 _ct.byref(e))
    return _outcome(code, r, e)


def what_if(prefix, options):
    r, e = _ct.c_void_p(), _ct.c_void_p()
    code = _what_if(_encode(prefix), _request(options), _ct.byref(r), _ct.byref(e))
    return _outcome(code, r, e)


# ---- tables (warptrace.tables) --------------------------------------------------------

class ArrowArrayStream(_ct.Structure):
    """The Arrow C Stream Interface's struct (capi/warptrace.h): five pointers."""
    _fields_ = [("get_schema", _ct.c_void_p), ("get_next", _ct.c_void_p),
                ("get_last_error", _ct.c_void_p), ("release", _ct.c_void_p),
                ("private_data", _ct.c_void_p)]


_tables_schema_version = _sig("warptrace_tables_schema_version", _ct.c_int)
_tables_from_prefix = _sig("warptrace_tables_from_prefix", _ct.c_int, _ct.c_char_p,
                           _ct.c_char_p, _void_pp, _err_pp)
_tables_count = _sig("warptrace_tables_count", _ct.c_size_t, _ct.c_void_p)
_tables_name = _sig("warptrace_tables_name", _ct.c_char_p, _ct.c_void_p, _ct.c_size_t)
_tables_rows = _sig("warptrace_tables_rows", _ct.c_int64, _ct.c_void_p, _ct.c_char_p)
_tables_export = _sig("warptrace_tables_export", _ct.c_int, _ct.c_void_p, _ct.c_char_p,
                      _ct.POINTER(ArrowArrayStream), _err_pp)
_tables_free = _sig("warptrace_tables_free", None, _ct.c_void_p)

TABLES_SCHEMA_VERSION = _tables_schema_version()


class Tables:
    """Owns a warptrace_tables handle."""

    __slots__ = ("_handle",)

    def __init__(self, handle):
        self._handle = handle

    def __del__(self):
        if getattr(self, "_handle", None):
            _tables_free(self._handle)
            self._handle = None

    def names(self):
        return [_tables_name(self._handle, i).decode()
                for i in range(_tables_count(self._handle))]

    def rows(self, name):
        return int(_tables_rows(self._handle, _encode(name)))

    def export(self, name, stream):
        """Fills `stream` (an ArrowArrayStream the caller then owns); (code, error)."""
        e = _ct.c_void_p()
        code = _tables_export(self._handle, _encode(name), _ct.byref(stream), _ct.byref(e))
        return None if code == 0 else _take_error(e)


def tables_from_prefix(prefix, options):
    h, e = _ct.c_void_p(), _ct.c_void_p()
    code = _tables_from_prefix(_encode(prefix), _request(options), _ct.byref(h), _ct.byref(e))
    return (Tables(h.value), None) if code == 0 else (None, _take_error(e))

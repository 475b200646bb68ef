"""The worker's end of the sealed channel (`kope.protocol.channel`): pack, send once, die.

Every reference the sending path uses is taken when this module is imported, which the fork server
does before any job runs: writing to a descriptor, killing this process, the MAC, the JSON and
safetensors encoders, and the tensor methods that copy an output to bytes (those of
`torch._C.TensorBase`, a type whose methods cannot be replaced). Outputs are packed with PyTorch's
function modes and dispatch modes switched off, so a mode the candidate pushed (above, below or
instead of kope's) cannot see or change what is packed; a mode left on the stack, or a replaced
function among those the sending path reads through a module, is a tamper finding in the result.

`seal` writes the result and the end record, then sends SIGKILL to this process at once: nothing of
the candidate (`__del__`, `atexit`, a thread, a signal handler) runs between "observed" and "read".
"""

from __future__ import annotations

import _hashlib
import os
import signal
import socket
from typing import Any

import pydantic_core
import torch
import torch.overrides
import torch.utils._python_dispatch

from kope.evaluate.inside import cuda
from kope.protocol import Observations, ValueMeta, WorkerResult
from kope.protocol import channel as protocol_channel
from kope.protocol.channel import CHANNEL_FD, END, FEED_FD, FILE, KEY_BYTES, KEY_FD, MAC_BYTES, MAGIC, RESULT

_write = os.write
_read = os.read
_close = os.close
_kill = os.kill
_getpid = os.getpid
_SIGKILL = signal.SIGKILL
_hmac_new = _hashlib.hmac_new
_socket = socket.socket
_recv_fds = socket.recv_fds
_to_json = pydantic_core.to_json
_record = protocol_channel.record
_serialize_result = WorkerResult.__pydantic_serializer__.to_json
_serialize_meta = ValueMeta.__pydantic_serializer__.to_json
_function_modes = torch.overrides._get_current_function_mode_stack
_dispatch_modes = torch.utils._python_dispatch._get_current_dispatch_mode_stack
_no_torch_function = torch._C.DisableTorchFunction
_no_dispatch = torch._C._DisableTorchDispatch
_Tensor = torch._C.TensorBase
_detach = torch._C.TensorBase.detach
_to = torch._C.TensorBase.to
_contiguous = torch._C.TensorBase.contiguous
_numpy = torch._C.TensorBase.numpy
_resolve_conj = torch._C.TensorBase.resolve_conj
_resolve_neg = torch._C.TensorBase.resolve_neg
_isinstance = isinstance
_issubclass = issubclass
_len = len
_type = type
_range = range
_tuple_len, _tuple_item = tuple.__len__, tuple.__getitem__
_list_len, _list_item = list.__len__, list.__getitem__
_dict_items = dict.items
_exact_int, _exact_float, _exact_str = int.__int__, float.__float__, str.__str__
_float32 = torch.float32
_SAFETENSORS_DTYPES = {
    torch.float64: "F64",
    torch.float32: "F32",
    torch.float16: "F16",
    torch.int64: "I64",
    torch.int32: "I32",
    torch.int16: "I16",
    torch.int8: "I8",
    torch.uint8: "U8",
    torch.bool: "BOOL",
    torch.complex64: "C64",
}
_WATCHED = (
    (os, "write"),
    (os, "kill"),
    (protocol_channel, "record"),
    (torch.overrides, "_get_current_function_mode_stack"),
    (torch.utils._python_dispatch, "_get_current_dispatch_mode_stack"),
    (pydantic_core, "to_json"),
)
_IDENTITIES = tuple(getattr(owner, name) for owner, name in _WATCHED)


class UnsupportedValueError(TypeError):
    """A value the channel cannot carry (only tensors, numbers, strings, None and containers)."""


class FeedRefused(RuntimeError):
    """The supervisor would not hand over a trial's inputs: something in this process asked for them before."""


class Channel:
    """The worker's sending end; one per candidate job."""

    def __init__(self, fd: int, key: bytes, feed: socket.socket | None = None) -> None:
        self._fd = fd
        self._mac = _hmac_new(key, digestmod="sha256")
        self._feed = feed
        self.tampered: list[str] = []
        self._send(MAGIC)

    def inputs(self, name: str) -> bytes:
        """The bytes of a trial's inputs file, handed over by the supervisor now (once per file)."""
        if self._feed is None:
            raise FeedRefused("this worker has no input feed")
        self._feed.send(name.encode())
        message, fds, _flags, _address = _recv_fds(self._feed, 16, 1)
        if message != b"ok" or _len(fds) != 1:
            for fd in fds:
                _close(fd)
            what = f"the inputs {name} were asked for before their trial (the supervisor hands each over once)"
            self._tamper(what)
            raise FeedRefused(what)
        chunks: list[bytes] = []
        try:
            while True:
                chunk = _read(fds[0], 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            _close(fds[0])
        return b"".join(chunks)

    @classmethod
    def open(cls) -> Channel | None:
        """The channel the supervisor opened for this worker (None outside a supervised worker). Call it
        before any task or candidate code runs: it reads the key and closes the descriptor that held it."""
        if os.environ.pop(protocol_channel.ENV, None) != "1":
            return None
        key = b""
        while _len(key) < KEY_BYTES:
            chunk = _read(KEY_FD, KEY_BYTES - _len(key))
            if not chunk:
                break
            key += chunk
        _close(KEY_FD)
        if _len(key) != KEY_BYTES:
            return None
        try:
            feed: socket.socket | None = _socket(fileno=FEED_FD)
        except OSError:
            feed = None
        return cls(CHANNEL_FD, key, feed)

    def _send(self, data: bytes) -> None:
        self._mac.update(data)
        view = memoryview(data)
        while view:
            written = _write(self._fd, view)
            view = view[written:]

    def send_value(self, name: str, value: Any) -> ValueMeta:
        """Pack `value` (outputs of a trial, of a probe) as a safetensors file named `name` and send it now."""
        self.check("packing " + name)
        with _no_torch_function(), _no_dispatch():
            arrays: list[tuple[str, str, list[int], bytes]] = []
            meta = _pack(plain(value), arrays, 0)
        header: dict[str, Any] = {"__metadata__": {"structure": _serialize_meta(meta).decode()}}
        offset = 0
        for key, dtype, shape, data in arrays:
            header[key] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + _len(data)]}
            offset += _len(data)
        encoded = _to_json(header)
        encoded += b" " * (-_len(encoded) % 8)
        payload = b"".join([_len(encoded).to_bytes(8, "little"), encoded, *(a[3] for a in arrays)])
        self._send(_record(FILE, name, payload))
        return meta

    def check(self, when: str) -> None:
        """A function mode or dispatch mode left active, or a replaced function of the sending path, is tampering."""
        for (owner, name), identity in zip(_WATCHED, _IDENTITIES, strict=True):
            if getattr(owner, name, None) is not identity:
                self._tamper(f"{owner.__name__}.{name} was replaced ({when})")
        if [mode for mode in _function_modes() if not cuda.is_emulation(mode)]:
            self._tamper(f"a PyTorch function mode was left active ({when})")
        if _dispatch_modes():
            self._tamper(f"a PyTorch dispatch mode was left active ({when})")

    def _tamper(self, what: str) -> None:
        if what not in self.tampered:
            self.tampered.append(what)

    def seal(self, result: WorkerResult, result_name: str) -> None:
        """Send the result and the end record, then kill this process: this function does not return."""
        self.check("sealing the result")
        if self.tampered:
            observations = result.observations if result.observations is not None else Observations()
            for what in self.tampered:
                entry = "sealed channel: " + what
                if entry not in observations.instrumentation_lost:
                    observations.instrumentation_lost.append(entry)
            result.observations = observations
        self._send(_record(RESULT, result_name, _serialize_result(result)))
        end_header = END + (0).to_bytes(2, "little") + MAC_BYTES.to_bytes(8, "little")
        self._mac.update(end_header)
        mac = self._mac.digest()
        data = end_header + mac
        view = memoryview(data)
        while view:
            view = view[_write(self._fd, view) :]
        _kill(_getpid(), _SIGKILL)


def plain(value: Any, depth: int = 0) -> Any:
    """`value` rebuilt from exact builtin types (tuple, list, dict, int, float, str), read through the builtin
    types' own slots, so that no method of the candidate runs while kope checks or packs its outputs: a tuple
    subclass whose `__iter__` rewrites an output after forward has returned (outside the recorder of forward's
    PyTorch calls) is read as the tuple it holds. Types are told by `type()`, never by `isinstance` (which asks an
    object's `__class__`). Tensors (subclasses too) and values the channel cannot carry are returned as they are."""
    if depth > 8:
        raise UnsupportedValueError("values nested more than 8 deep")
    kind = _type(value)
    if kind is bool or value is None or _issubclass(kind, _Tensor):
        return value
    if _issubclass(kind, tuple):
        return tuple([plain(_tuple_item(value, i), depth + 1) for i in _range(_tuple_len(value))])
    if _issubclass(kind, list):
        return [plain(_list_item(value, i), depth + 1) for i in _range(_list_len(value))]
    if _issubclass(kind, dict):
        pairs = list(_dict_items(value))
        if not all(_issubclass(_type(k), str) for k, _ in pairs):
            raise UnsupportedValueError("a dict whose keys are not all strings")
        return {_exact_str(k): plain(v, depth + 1) for k, v in pairs}
    if _issubclass(kind, int):
        return _exact_int(value)
    if _issubclass(kind, float):
        return _exact_float(value)
    if _issubclass(kind, str):
        return _exact_str(value)
    return value


def _pack(value: Any, arrays: list[tuple[str, str, list[int], bytes]], depth: int) -> ValueMeta:
    if depth > 8:
        raise UnsupportedValueError("values nested more than 8 deep")
    kind = _type(value)
    if _issubclass(kind, _Tensor):
        key = f"t{_len(arrays)}"
        tensor = _to(_detach(value), "cpu")
        name = str(tensor.dtype).removeprefix("torch.")
        if tensor.dtype not in _SAFETENSORS_DTYPES:
            tensor = _to(tensor, _float32)
        tensor = _contiguous(_resolve_neg(_resolve_conj(tensor)))
        shape = [int(n) for n in tensor.shape]
        data = _numpy(tensor).tobytes()
        arrays.append((key, _SAFETENSORS_DTYPES[tensor.dtype], shape, data))
        return ValueMeta(type="tensor", key=key, dtype=name, shape=shape)
    if kind is bool:
        return ValueMeta(type="bool", value=value)
    if kind is int:
        return ValueMeta(type="int", value=value)
    if kind is float:
        return ValueMeta(type="float", value=value)
    if kind is str:
        return ValueMeta(type="str", value=value)
    if value is None:
        return ValueMeta(type="none")
    if kind is tuple or kind is list:
        items = [_pack(v, arrays, depth + 1) for v in value]
        return ValueMeta(type="tuple" if kind is tuple else "list", items=items)
    if kind is dict:
        pairs = list(_dict_items(value))
        items = [_pack(v, arrays, depth + 1) for _, v in pairs]
        return ValueMeta(type="dict", keys=[k for k, _ in pairs], items=items)
    raise UnsupportedValueError(f"cannot pass a {kind.__module__}.{kind.__qualname__}")

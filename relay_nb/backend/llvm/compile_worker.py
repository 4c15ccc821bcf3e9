"""The compile process of a build (see :mod:`.offload`): LLVM IR in on stdin, machine code
out on stdout, one module at a time, until stdin closes.

Run as ``python -m relay_nb.backend.llvm.compile_worker``.  A request is ``REQUEST``
(job id, optimization level, payload length) then ``name\\0ir``; a reply is ``REPLY``
(job id, 1 or 0 for code or error, seconds compiling, payload length) then the object
code or the error text.  Nothing else may reach stdout, so ``print`` goes to stderr.
"""

from __future__ import annotations

import struct
import sys
import time

REQUEST = struct.Struct("<QII")
REPLY = struct.Struct("<QBdI")


def serve(inp, out) -> None:
    """Answer requests from ``inp`` on ``out`` until ``inp`` ends."""
    from .jit import compile_object

    while True:
        head = inp.read(REQUEST.size)
        if len(head) < REQUEST.size:
            return
        job, level, size = REQUEST.unpack(head)
        payload = inp.read(size)
        if len(payload) < size:
            return
        name, _, text = payload.partition(b"\0")
        start = time.perf_counter()
        try:
            body, ok = compile_object(text.decode(), name.decode(), level), 1
        except Exception as exc:  # a module LLVM rejects: say why, keep serving
            body, ok = f"{type(exc).__name__}: {exc}".encode(), 0
        out.write(REPLY.pack(job, ok, time.perf_counter() - start, len(body)))
        out.write(body)
        out.flush()


def main() -> None:
    out = sys.stdout.buffer
    sys.stdout = sys.stderr  # stray prints must not corrupt the replies
    serve(sys.stdin.buffer, out)


if __name__ == "__main__":
    main()

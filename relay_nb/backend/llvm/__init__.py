"""The LLVM JIT backend: primitive functions lowered to LLVM IR, compiled with llvmlite.

* :mod:`.codegen` — the pure lowering ``Function -> llvmlite.ir.Module`` and the
  registry's ``llvm`` column (one rule per op);
* :mod:`.jit` — the process's one execution engine; :mod:`.offload` — a build's second
  core: a compile process (:mod:`.compile_worker`) running LLVM beside it;
* :mod:`.kernel` / :mod:`.cache` — compiled kernels (inspectable, safe to call) and the
  cache keyed by structural hash and types; :mod:`.disk_cache` — their machine code on
  disk, so a restarted process loads instead of compiling;
* :mod:`.executor` — ``create_executor("jit")``; :mod:`.plan` — dataflow functions as
  flat lists of kernel calls; :mod:`.build` — ``relay.build``;
* :mod:`.memory` — result buffers that reuse freed memory;
* :mod:`.anchor` / :mod:`.kernels` — the hand-tiled dense / conv kernels.
"""

"""Backends that execute Relay programs: ``llvm`` compiles primitive functions with llvmlite.

``clear_cache()`` deletes the compiled kernels cached on disk (:mod:`.llvm.disk_cache`).
"""

from .llvm.disk_cache import clear_cache

__all__ = ["clear_cache"]

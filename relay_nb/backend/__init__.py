"""Backends that execute Relay programs: ``llvm`` compiles primitive functions with llvmlite."""

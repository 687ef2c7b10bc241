"""The explicit list of built-in reorderers: importing this module registers each one."""

# isort: skip_file
# ruff: noqa: F401 - each import registers a reorderer; one line per reorderer
from arenalens.reorder import file_order
from arenalens.reorder import greedy
from arenalens.reorder import exact
from arenalens.reorder import beam
from arenalens.reorder import auto

__all__: list[str] = []

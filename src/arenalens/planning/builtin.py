"""The explicit list of built-in planners: importing this module registers each one.

Adding a planner is a new file in this package, a `@register_planner` decorator and one line here.
"""

# isort: skip_file
# ruff: noqa: F401 - each import registers a planner; one line per planner keeps merges trivial
from arenalens.planning import naive
from arenalens.planning import litert_arena
from arenalens.planning import tflm_greedy
from arenalens.planning import tflm_linear
from arenalens.planning import greedy_by_size
from arenalens.planning import greedy_by_breadth
from arenalens.planning import first_fit
from arenalens.planning import hillclimb
from arenalens.planning import optimal
from arenalens.planning import best

__all__: list[str] = []

"""The explicit list of built-in planners: importing this module registers each one.

Adding a planner is a new file in this package, a `@register_planner` decorator and one line here.
"""

from arenalens.planning import litert_arena, naive, tflm_greedy, tflm_linear  # noqa: F401

__all__: list[str] = []

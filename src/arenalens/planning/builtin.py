"""The explicit list of built-in planners: each module registers its planner when imported.

Adding a planner is a new file in this package, a `@register_planner` decorator and one line
here. The registry imports a planner's module when the planner is first asked for by name (a
command plans with one or two planners), and every module when all are listed.
"""

# Planner name → the module that registers it.
BUILTINS = {
    "naive": "arenalens.planning.naive",
    "litert_arena": "arenalens.planning.litert_arena",
    "tflm_greedy": "arenalens.planning.tflm_greedy",
    "tflm_linear": "arenalens.planning.tflm_linear",
    "greedy_by_size": "arenalens.planning.greedy_by_size",
    "greedy_by_breadth": "arenalens.planning.greedy_by_breadth",
    "first_fit": "arenalens.planning.first_fit",
    "hillclimb": "arenalens.planning.hillclimb",
    "optimal": "arenalens.planning.optimal",
    "best": "arenalens.planning.best",
}

"""The explicit list of built-in reorderers: each module registers its reorderer when imported
(the registry imports it when the reorderer is first asked for by name)."""

# Reorderer name → the module that registers it.
BUILTINS = {
    "file": "arenalens.reorder.file_order",
    "greedy": "arenalens.reorder.greedy",
    "exact": "arenalens.reorder.exact",
    "beam": "arenalens.reorder.beam",
    "auto": "arenalens.reorder.auto",
}

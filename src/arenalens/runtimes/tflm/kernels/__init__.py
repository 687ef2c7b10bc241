"""TFLM kernel rules: one module per kernel family; `registry` joins them, `setups` runs them."""

"""Anomaly detection: the MLPerf Tiny fully connected autoencoder, 640 → 8 → 640.

Ten FULLY_CONNECTED layers: 640 → 128 ×4 → 8 → 128 ×4 → 640, ReLU after all but the last, which
reconstructs the 640 input features linearly. The arena holds only small vectors; almost all of
the model is weights.
"""

from __future__ import annotations

from arenalens.examples.layers import Int8Network

DESCRIPTION = "Fully connected autoencoder (anomaly detection), 640 → 128x4 → 8 → 128x4 → 640"
SEED = 640
FEATURES = 640
HIDDEN_UNITS = (128, 128, 128, 128, 8, 128, 128, 128, 128)


def build() -> bytes:
    """Nothing → the int8 autoencoder model as .tflite bytes."""
    net = Int8Network(seed=SEED, description=DESCRIPTION)
    features = net.input("input", (1, FEATURES), (-4.0, 4.0))
    x = features
    for number, units in enumerate(HIDDEN_UNITS, start=1):
        x = net.fully_connected(x, f"dense_{number}", units=units, activation="RELU")
    reconstruction = net.fully_connected(x, "reconstruction", units=FEATURES, activation="NONE")
    return net.build([features], [reconstruction])

"""TFLite Micro: its lifetimes, head arena, kernel rules, setup replay, budget and verification."""

"""LiteRT: its lifetimes, Prepare replay, arena planner, budget, shapes and verification."""

"""Diagnostics: one rule per function — what is wrong, where, and what to do about it."""

from arenalens.diagnostics.findings import Finding, Location, Severity
from arenalens.diagnostics.rules import RULE_IDS, RULES, Diagnosis, Rule, diagnose

__all__ = ["RULES", "RULE_IDS", "Diagnosis", "Finding", "Location", "Rule", "Severity", "diagnose"]

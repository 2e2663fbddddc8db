"""The official conformance suite's tests: helpers in conformance_support.py."""

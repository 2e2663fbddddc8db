"""The hidden grading tests: only in the instructor's source and the autograder bundle."""

"""The course's editions (see README.md): editions/common.py is what their builds share."""

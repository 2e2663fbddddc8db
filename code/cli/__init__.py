"""The command lines: the demo `python3 code/main.py` prints (demo) and argparse in Spanish for
the command lines a learner runs (spanish_cli). main.py, at the top of code/, is the entry
point. Imports every layer below."""

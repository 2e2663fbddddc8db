"""argparse in Spanish, for the command lines a learner runs (`python -m grader`, tools/lab.py).

`SpanishParser` is an `argparse.ArgumentParser` whose own words are Spanish: the help reads
«uso: …», «argumentos», «opciones» and «-h, --help  muestra esta ayuda y termina», and an error
is said as `spanish_error` puts it, after the usage line, as argparse does. A parser's own texts
(its description, each option's help, its own `parser.error(...)` calls) are the caller's to
write in Spanish. `main.py` keeps argparse's English: `serve` is an operator's command.

Deliberate simplifications: only argparse's messages these command lines can meet are
translated, one regular expression each; one without a rule is shown as argparse wrote it.
"""

from __future__ import annotations

import argparse
import re
import sys

# argparse's error messages (Python 3.11 to 3.13) -> what a learner reads
ERRORS = (
    (r"unrecognized arguments: (.*)", "argumentos desconocidos: {0}"),
    (r"the following arguments are required: (.*)", "faltan estos argumentos: {0}"),
    (r"argument (\S+): invalid choice: (.*?) \(choose from (.*)\)",
     "{0}: {1} no es una de las opciones ({2})"),
    (r"argument (\S+): invalid (\S+) value: (.*)", "{0}: valor no válido: {2}"),
    (r"argument (\S+): expected one argument", "{0}: falta su valor"),
    (r"argument (\S+): expected at least one argument", "{0}: falta al menos un valor"),
    (r"argument (\S+): ignored explicit argument (.*)", "{0} no lleva valor (sobra {1})"),
    (r"argument (\S+): not allowed with argument (\S+)", "{0} no se puede usar junto con {1}"),
    (r"ambiguous option: (\S+) could match (.*)", "opción ambigua: {0} puede ser {1}"),
)


def spanish_error(message: str) -> str:
    """One of argparse's error messages in Spanish (any other message as it is)."""
    for pattern, text in ERRORS:
        found = re.fullmatch(pattern, message, re.S)
        if found:
            return text.format(*found.groups())
    return message


class SpanishHelpFormatter(argparse.HelpFormatter):
    """argparse's help formatter, with «uso: » before the usage line."""

    def add_usage(self, usage, actions, groups, prefix=None):
        super().add_usage(usage, actions, groups, "uso: " if prefix is None else prefix)


class SpanishParser(argparse.ArgumentParser):
    """An ArgumentParser whose own words (help and errors) are Spanish (see the module)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", SpanishHelpFormatter)
        kwargs["add_help"] = False
        super().__init__(*args, **kwargs)
        self._positionals.title = "argumentos"
        self._optionals.title = "opciones"
        self.add_argument("-h", "--help", action="help", default=argparse.SUPPRESS,
                          help="muestra esta ayuda y termina")

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {spanish_error(message)}\n")

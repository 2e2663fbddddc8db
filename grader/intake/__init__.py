"""Reading a submission before any host starts: what a learner handed in becomes solution files.

A submission (a notebook, a .py file, a folder, or a .zip of any of these) becomes a `Prepared`
(the solution files, where each came from, what went wrong in Spanish), and is then written
into the folder its host reads. Which reader runs is the host kind's choice
(grader/hosts/kinds.py):

    solutions.py    the reading rules, for any source (which notebook cells and files count,
                    the caps, the archive read in memory), and the self-checks' reader by path
                    (your own files, on your own machine: macOS, Windows, the browser)
    submission.py   the official grader's reader: through descriptors, never following a link
                    or opening a FIFO, as grader/boundary.py reads the sandbox (the submission
                    is as hostile as the learner's server)

Not to be confused with grader/checks/intake.py, what the grader takes from a server's frames
once the host runs.

Deliberate simplifications: a submission is read whole, before anything runs; nothing of it
is read again later.
"""

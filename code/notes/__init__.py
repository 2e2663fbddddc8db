"""The notes on disk: the roots the user allowed, their folders held open, and every action on one
note reached from there one name at a time (dirfd, roots, note_format, place, handles, store).
Imports nothing else of code/: no protocol, no session, no transport."""

"""The public grading tests: what `ui.revisar` runs and the student edition ships."""

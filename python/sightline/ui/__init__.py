"""Transcript and UI state: the transcript, code-reference chips, pushes to the pane."""

"""Errors whose message is meant for the user, as one clear line."""


class Refused(Exception):
    """A request was refused before anything changed (bad input, wrong state)."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

"""Turns: mode × scope, tool policy, the streaming loop, and the review gate."""

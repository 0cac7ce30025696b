"""Turns: mode × scope, the tool policy applied, the loop that streams a reply and runs tools."""

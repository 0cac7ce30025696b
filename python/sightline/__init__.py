"""sightline: an AI agent for Neovim. The Python core; see doc/sightline.txt."""

__version__ = "0.1.0"

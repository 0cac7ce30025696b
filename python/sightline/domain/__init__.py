"""Pure logic: no Neovim, no model, no other layer of sightline (tests/test_layers.py)."""

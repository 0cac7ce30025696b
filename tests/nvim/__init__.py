"""Tests against a child Neovim, one per test, configured the way the README says."""

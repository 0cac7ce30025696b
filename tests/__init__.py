"""The test suite. tests/unit: no Neovim; tests/nvim: a child Neovim per test; tests/lua: the Lua
those tests run in a child. The modules here are what both layers and the benches share."""

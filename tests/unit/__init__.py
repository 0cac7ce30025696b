"""Pure tests: the core, its parts and the test fakes, without a Neovim child."""

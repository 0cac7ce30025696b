-- Init for the child Neovim of each integration test: the plugin from this checkout, nothing else.
local root = vim.env.SIGHTLINE_ROOT
vim.opt.runtimepath:prepend(root)
vim.opt.swapfile = false
vim.opt.shada = ''
vim.g.sightline = vim.json.decode(vim.env.SIGHTLINE_TEST_CONFIG or '{}')

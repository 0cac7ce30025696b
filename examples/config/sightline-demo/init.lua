-- The isolated configuration `make run` starts (NVIM_APPNAME=sightline-demo).
local root = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h:h:h:h')
vim.opt.runtimepath:prepend(root)
vim.o.number = true
vim.o.signcolumn = 'yes'
vim.o.termguicolors = true
vim.o.mousemodel = 'popup_setpos'
vim.g.mapleader = ' '
require('sightline').setup({})

-- luacheck (Debian's lua-check): a linter for the Lua layer. Line length is stylua's business.
std = 'luajit'
-- Neovim's API table; plugins set its option and variable fields (vim.bo[buf].x = …).
globals = { 'vim' }
self = false
max_line_length = false

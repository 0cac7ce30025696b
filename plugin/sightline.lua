-- sightline: only definitions here; every callback requires its module lazily.
if vim.g.loaded_sightline then
  return
end
vim.g.loaded_sightline = true

vim.api.nvim_create_user_command('Sightline', function(opts)
  require('sightline.commands').run(opts)
end, {
  nargs = '*',
  range = true,
  desc = 'sightline: AI agent',
  complete = function(...)
    return require('sightline.commands').complete(...)
  end,
})

vim.api.nvim_set_keymap('n', '<Plug>(sightline-chat)', '', {
  desc = 'sightline: open the agent pane',
  callback = function()
    local ok, err = require('sightline').chat()
    if not ok and err then
      require('sightline.ui.message').notify(err, vim.log.levels.WARN)
    end
  end,
})

-- The clipboard's image into the composer (sightline.ui.paste); pane.keys.paste maps it there.
for _, mode in ipairs({ 'n', 'i' }) do
  vim.api.nvim_set_keymap(mode, '<Plug>(sightline-paste)', '', {
    desc = "sightline: paste the clipboard's image into the composer",
    callback = function()
      require('sightline.ui.paste').key()
    end,
  })
end

vim.api.nvim_set_keymap('x', '<Plug>(sightline-change)', '', {
  desc = 'sightline: Change with Agent on the selection',
  callback = function()
    require('sightline.ui.change').from_visual()
  end,
})

-- The edit proposal shown in its buffer (sightline.ui.inline); keys set while one shows.
for name, fn in pairs({
  ['hunk-next'] = function()
    require('sightline.ui.inline').jump(1, vim.v.count1)
  end,
  ['hunk-prev'] = function()
    require('sightline.ui.inline').jump(-1, vim.v.count1)
  end,
  ['hunk-accept'] = function()
    require('sightline.ui.inline').decide('accept')
  end,
  ['hunk-reject'] = function()
    require('sightline.ui.inline').decide('reject')
  end,
  ['hunk-reject-why'] = function()
    require('sightline.ui.inline').decide('reject', { why = true })
  end,
  ['hunk-accept-all'] = function()
    require('sightline.ui.inline').decide('accept', { all = true })
  end,
  ['hunk-reject-all'] = function()
    require('sightline.ui.inline').decide('reject', { all = true })
  end,
  ['hunk-look-next'] = function()
    require('sightline.ui.inline').look(1)
  end,
  ['hunk-look-prev'] = function()
    require('sightline.ui.inline').look(-1)
  end,
}) do
  vim.api.nvim_set_keymap('n', '<Plug>(sightline-' .. name .. ')', '', { desc = 'sightline: ' .. name, callback = fn })
end

-- Steering the conversation (sightline.ui.pane.steer); pane.keys maps them in the pane.
local function steer_key(fn, ...)
  local args = { ... }
  return function()
    local ok, err = require('sightline.ui.pane.steer')[fn](unpack(args))
    if not ok and err then
      require('sightline.ui.pane').notice(err, vim.log.levels.WARN)
    end
  end
end
for name, fn in pairs({
  edit = steer_key('edit'),
  regenerate = steer_key('regenerate'),
  unqueue = steer_key('unqueue', 'cancel'),
  ['queue-edit'] = steer_key('unqueue', 'edit'),
  help = function()
    require('sightline.ui.pane.help').toggle()
  end,
}) do
  vim.api.nvim_set_keymap('n', '<Plug>(sightline-' .. name .. ')', '', { desc = 'sightline: ' .. name, callback = fn })
end
for _, mode in ipairs({ 'n', 'i' }) do
  vim.api.nvim_set_keymap(mode, '<Plug>(sightline-steer)', '', {
    desc = 'sightline: send, steering a running turn',
    callback = function()
      require('sightline.ui.pane').submit({ steer = true })
    end,
  })
end

-- The transcript's code blocks (sightline.ui.pane.blocks); pane.keys maps them there.
for name, fn in pairs({
  ['block-next'] = function()
    require('sightline.ui.pane.blocks').jump(1, vim.v.count1)
  end,
  ['block-prev'] = function()
    require('sightline.ui.pane.blocks').jump(-1, vim.v.count1)
  end,
  ['block-yank'] = function()
    require('sightline.ui.pane.blocks').yank()
  end,
}) do
  vim.api.nvim_set_keymap('n', '<Plug>(sightline-' .. name .. ')', '', { desc = 'sightline: ' .. name, callback = fn })
end

-- :help sightline needs doc/tags, which a build without a Neovim (`make venv` before one is
-- installed) cannot write: made here when missing or older than the help. Two stats at
-- start-up; an install that cannot be written to is left as it is.
do
  local root = debug.getinfo(1, 'S').source:match('^@(.*)/plugin/[^/]*$')
  local doc = root and (root .. '/doc')
  local help = doc and vim.uv.fs_stat(doc .. '/sightline.txt')
  local tags = help and vim.uv.fs_stat(doc .. '/tags')
  local function older(a, b)
    return a.sec < b.sec or (a.sec == b.sec and a.nsec < b.nsec)
  end
  if help and (not tags or older(tags.mtime, help.mtime)) then
    pcall(vim.cmd, 'silent helptags ' .. vim.fn.fnameescape(doc))
  end
end

local group = vim.api.nvim_create_augroup('sightline', { clear = true })
vim.api.nvim_create_autocmd('MenuPopup', {
  group = group,
  callback = function()
    require('sightline.ui.menu').on_menu_popup()
  end,
})
-- Quitting ends the core on purpose: stop it first so its exit is expected, not a crash.
vim.api.nvim_create_autocmd('VimLeavePre', {
  group = group,
  callback = function()
    local host = package.loaded['sightline.host']
    if host then
      host.shutdown()
    end
  end,
})
-- Which window was used last (the editor window's rule, sightline.reveal.windows): a stamp,
-- no require, so switching windows costs nothing more.
vim.api.nvim_create_autocmd('WinLeave', {
  group = group,
  callback = function()
    vim.w.sightline_left = vim.uv.hrtime()
  end,
})
vim.api.nvim_create_autocmd('ColorScheme', {
  group = group,
  callback = function()
    require('sightline.ui.highlights').apply()
  end,
})
require('sightline.ui.highlights').apply()
local g = vim.g.sightline
local mappings = nil
if type(g) == 'table' then
  mappings = g.mappings
end
require('sightline.keymaps').apply(mappings)

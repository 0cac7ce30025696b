---@mod sightline.ui.pane.keys  The pane's buffer-local keys (transcript and composer).
local M = {}
local state = require('sightline.ui.pane.state')
local composer = require('sightline.ui.pane.composer')
local notice = require('sightline.ui.pane.notice')
local S = state.S

local function map(buf, modes, lhs, rhs, desc)
  if lhs and lhs ~= false and lhs ~= '' then
    -- A <Plug> name is a mapping to follow (remap); a function is called.
    local remap = type(rhs) == 'string'
    vim.keymap.set(modes, lhs, rhs, { buffer = buf, nowait = true, silent = true, desc = desc, remap = remap })
  end
end

local function close()
  require('sightline.ui.pane.layout').close() -- the layout sets these keys: required when used
end

---Map the pane's keys in `buf`, the transcript or the composer.
---@param buf integer
function M.set(buf)
  local keys = require('sightline.config').get().pane.keys
  local sl = function(fn, ...)
    local args = { ... }
    return function()
      notice.refused(require('sightline')[fn](unpack(args)))
    end
  end
  map(buf, 'n', keys.close, close, 'sightline: close the pane')
  -- A stop with nothing running is a message, not a note left in the transcript.
  local function stop()
    local ok, err = require('sightline').stop()
    if not ok and err then
      require('sightline.ui.message').notify(err, vim.log.levels.INFO)
    end
  end
  map(buf, { 'n', 'i' }, keys.stop, stop, 'sightline: stop the turn')
  map(buf, 'n', keys.accept, sl('decide', 'accept'), 'sightline: accept the proposal')
  map(buf, 'n', keys.reject, sl('decide', 'reject'), 'sightline: reject the proposal')
  -- Kept decisions (:help sightline-approvals): the core refuses what cannot be kept.
  map(
    buf,
    'n',
    keys.accept_conversation,
    sl('decide', 'accept', 'conversation'),
    'sightline: allow for this conversation'
  )
  map(buf, 'n', keys.accept_always, sl('decide', 'accept', 'always'), 'sightline: allow always in this workspace')
  map(
    buf,
    'n',
    keys.reject_conversation,
    sl('decide', 'reject', 'conversation'),
    'sightline: deny for this conversation'
  )
  map(buf, 'n', keys.reject_always, sl('decide', 'reject', 'always'), 'sightline: deny always in this workspace')
  map(buf, 'n', keys.compare, sl('compare'), 'sightline: compare the proposal side by side')
  if buf == S.tbuf then
    local chips = function(how)
      return function()
        if not require('sightline.ui.chips').navigate(how) and how == nil then
          vim.cmd('normal! j') -- <CR> off a chip keeps its usual meaning
        end
      end
    end
    map(buf, 'n', '<CR>', chips(nil), 'sightline: open the code reference')
    map(buf, 'n', '<S-CR>', chips('select'), 'sightline: select the code reference')
    map(buf, 'n', 'gs', chips('select'), 'sightline: select the code reference')
    local blocks = require('sightline.ui.pane.blocks')
    map(buf, 'n', keys.block_next, function()
      blocks.jump(1, vim.v.count1)
    end, 'sightline: next code block')
    map(buf, 'n', keys.block_prev, function()
      blocks.jump(-1, vim.v.count1)
    end, 'sightline: previous code block')
    map(buf, 'n', keys.block_yank, blocks.yank, 'sightline: yank the code block')
    map(buf, 'n', keys.line_yank, require('sightline.ui.pane.cuts').yank, 'sightline: yank the whole line')
    map(buf, 'n', keys.edit, '<Plug>(sightline-edit)', 'sightline: edit your message and resend it')
    map(buf, 'n', keys.regenerate, '<Plug>(sightline-regenerate)', 'sightline: regenerate the last reply')
  end
  map(buf, 'n', keys.help, '<Plug>(sightline-help)', "sightline: show or hide the pane's keys")
  map(buf, 'n', keys.unqueue, '<Plug>(sightline-unqueue)', 'sightline: cancel the queued message')
  map(buf, 'n', keys.queue_edit, '<Plug>(sightline-queue-edit)', 'sightline: edit the queued message')
  if buf == S.cbuf then
    map(buf, 'n', keys.send, composer.submit, 'sightline: send')
    map(buf, { 'n', 'i' }, keys.submit, composer.submit, 'sightline: send')
    map(buf, { 'n', 'i' }, keys.paste, function()
      require('sightline.ui.paste').key()
    end, "sightline: paste the clipboard's image")
    map(buf, 'n', '<Up>', composer.recall_key(-1), 'sightline: previous prompt')
    map(buf, 'n', '<Down>', composer.recall_key(1), 'sightline: next prompt')
    map(buf, { 'n', 'i' }, keys.steer, '<Plug>(sightline-steer)', 'sightline: send, steering a running turn')
    -- One group for every pane's composer: a new composer replaces only its own.
    local group = vim.api.nvim_create_augroup('sightline.composer_edit', { clear = false })
    vim.api.nvim_clear_autocmds({ group = group, buffer = buf })
    vim.api.nvim_create_autocmd({ 'TextChanged', 'TextChangedI' }, {
      buffer = buf,
      group = group,
      callback = function()
        require('sightline.ui.pane.steer').on_composer_change()
      end,
      desc = 'sightline: an emptied composer is no longer an edit',
    })
  end
end

return M

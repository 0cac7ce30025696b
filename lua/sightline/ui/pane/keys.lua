---@mod sightline.ui.pane.keys  The pane's buffer-local keys (transcript and composer).
local M = {}
local state = require('sightline.ui.pane.state')
local composer = require('sightline.ui.pane.composer')
local notice = require('sightline.ui.pane.notice')
local S = state.S

local function map(buf, modes, lhs, rhs, desc)
  if lhs and lhs ~= false and lhs ~= '' then
    vim.keymap.set(modes, lhs, rhs, { buffer = buf, nowait = true, silent = true, desc = desc })
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
  end
  if buf == S.cbuf then
    map(buf, 'n', keys.send, composer.submit, 'sightline: send')
    map(buf, { 'n', 'i' }, keys.submit, composer.submit, 'sightline: send')
    map(buf, { 'n', 'i' }, keys.paste, function()
      require('sightline.ui.paste').key()
    end, "sightline: paste the clipboard's image")
    map(buf, 'n', '<Up>', composer.recall_key(-1), 'sightline: previous prompt')
    map(buf, 'n', '<Down>', composer.recall_key(1), 'sightline: next prompt')
  end
end

return M

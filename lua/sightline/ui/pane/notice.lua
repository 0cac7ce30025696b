---@mod sightline.ui.pane.notice  Refusals and failures where the user looks: the bar and the transcript's end.
local M = {}
local api = vim.api
local state = require('sightline.ui.pane.state')
local bar = require('sightline.ui.pane.bar')
local S = state.S

local notice_ns = api.nvim_create_namespace('sightline.notice')
local NOTICE_MS = 20000

---Wrap `text` to `width` display cells (virtual lines do not wrap by themselves).
local function wrap(text, width)
  local out = {}
  for _, para in ipairs(vim.split(text, '\n', { plain = true })) do
    local line = ''
    for word in para:gmatch('%S+') do
      if line ~= '' and vim.fn.strdisplaywidth(line .. ' ' .. word) > width then
        table.insert(out, line)
        line = '  ' .. word
      else
        line = line == '' and word or (line .. ' ' .. word)
      end
    end
    table.insert(out, line)
  end
  return out
end

---Draw the note at the end of the transcript (virtual lines below its last row).
function M.render()
  if not state.valid_buf(S.tbuf) then
    return
  end
  api.nvim_buf_clear_namespace(S.tbuf, notice_ns, 0, -1)
  local n = S.notice
  if not n then
    return
  end
  local level = n.level >= vim.log.levels.ERROR and 'error' or n.level >= vim.log.levels.WARN and 'warn' or 'info'
  local group = ({ error = 'SightlineError', warn = 'SightlineWarning', info = 'SightlineNote' })[level]
  local visible = state.valid_win(S.twin)
  local width = visible and api.nvim_win_get_width(S.twin) - 1 or 40
  local virt = { { { '', group } } }
  for _, line in ipairs(wrap((level == 'info' and '' or '✗ ') .. n.text, math.max(10, width))) do
    table.insert(virt, { { line, group } })
  end
  local last = api.nvim_buf_line_count(S.tbuf) - 1
  api.nvim_buf_set_extmark(S.tbuf, notice_ns, last, 0, { virt_lines = virt })
  if visible and not n.expires then
    -- Counted from when it is in view: a note that waits in a closed pane waits for it.
    n.expires = true
    vim.defer_fn(
      state.bind(function()
        if S.notice == n then
          M.clear()
        end
      end),
      NOTICE_MS
    )
  end
end

---Show a refusal or failure where the user looks: the pane's bar and a note at the end of
---the transcript (virtual lines: the core's rows stay as they are), besides vim.notify, which
---shows it on one screen line (ui/message.lua: a longer one says the rest is in the pane).
---`opts.show` brings the pane into view first (a refused agent action); otherwise the note
---waits in the pane for when it is opened.
---@param msg string
---@param level integer? vim.log.levels (WARN by default)
---@param opts {show: boolean?, notify: boolean?}?
function M.notice(msg, level, opts)
  opts = opts or {}
  level = level or vim.log.levels.WARN
  local text = tostring(msg):gsub('^sightline: ', '')
  S.notice = { text = text, level = level }
  local layout = require('sightline.ui.pane.layout') -- the layout draws notes: required when used
  if opts.show then
    layout.show()
  end
  M.render()
  bar.render()
  if opts.notify ~= false then
    local more = layout.is_open() and '(see the pane)' or '(:Sightline chat)'
    vim.notify(require('sightline.ui.message').summary(tostring(msg), more), level)
  end
end

---Forget the bar's refusal note.
function M.clear()
  S.notice = nil
  M.render()
  bar.render()
end

---Report `err` through M.notice when an action was refused; returns ok.
---@param ok any
---@param err string?
---@param opts table? passed to M.notice
---@return any ok
function M.refused(ok, err, opts)
  if not ok and err then
    M.notice(err, vim.log.levels.WARN, opts)
  end
  return ok
end

return M

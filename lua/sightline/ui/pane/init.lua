---@mod sightline.ui.pane  The agent pane: a transcript above a composer. It applies what the core computed.
---
--- This module is the pane's entry (callers, tests and 'foldexpr' require it); each concern
--- lives in its own file beside it:
---   layout      buffers and windows: open, show, close, fit the terminal
---   keys        the buffer-local keys
---   composer    send, prompt recall, the hint
---   transcript  a delta from the core: rows, highlights, chips
---   folds       the fold spans, 'foldexpr' and 'foldtext'
---   markdown    tree-sitter rendering as windows show the rows, prefetch
---   blocks      the code block keys: jump between blocks, yank one
---   bar         the winbar and the spinner
---   fit         parts laid out whole in display cells (the bar, the hint)
---   notice      refusals at the end of the transcript and in the bar
---   steer       edit, regenerate, fork, the queued messages
---   state       what they share
local M = {}
local api = vim.api
local state = require('sightline.ui.pane.state')
local layout = require('sightline.ui.pane.layout')
local composer = require('sightline.ui.pane.composer')
local transcript = require('sightline.ui.pane.transcript')
local folds = require('sightline.ui.pane.folds')
local markdown = require('sightline.ui.pane.markdown')
local bar = require('sightline.ui.pane.bar')
local notice = require('sightline.ui.pane.notice')
local S = state.S

M.MIN_EDITOR_WIDTH = layout.MIN_EDITOR_WIDTH
M.PANE_MIN_WIDTH = layout.PANE_MIN_WIDTH

M.notice = notice.notice
M.clear_notice = notice.clear
M.refused = notice.refused
M.submit = composer.submit
M.recall = composer.recall
M.foldexpr = folds.expr
M.foldtext = folds.text
M.refresh_folds = folds.refresh
M.prefetch = markdown.prefetch
M.is_open = layout.is_open
M.width = layout.width
M.resize = layout.resize
M.show = layout.show
M.open = layout.open
M.close = layout.close
M.toggle = layout.toggle
M.buffers = layout.buffers
M.claim = layout.claim
M.apply = transcript.apply
---The core's status changed: the bar, and the queued messages under the transcript.
---@param status table
---@param before string?
function M.on_state(status, before)
  bar.on_state(status, before)
  if status.state ~= 'working' and S.quiet_win then
    require('sightline.ui.pane.transcript').quiet_scrolls(false)
  end
  if status.queued ~= nil then
    require('sightline.ui.pane.steer').draw_queued(status.queued)
  end
end

---The core ended on its own: say so in the pane (the host also notifies).
---@param msg string? what the host reported
function M.on_core_exit(msg)
  bar.on_state({ state = 'stopped' })
  if msg then
    notice.notice(msg, vim.log.levels.ERROR, { notify = false })
  end
end

local group = api.nvim_create_augroup('sightline.pane', { clear = true })
api.nvim_create_autocmd('VimResized', {
  group = group,
  callback = function()
    for _, id in ipairs(state.ids()) do -- every tab page's pane
      state.with(id, layout.resize)
    end
  end,
  desc = 'sightline: fit the pane to the terminal',
})

api.nvim_create_autocmd('WinResized', {
  group = group,
  callback = function()
    -- The bar is laid out for its width: a window resized by hand (<C-w>>) lays it out again.
    if S.twin and vim.tbl_contains(vim.v.event.windows or {}, S.twin) then
      bar.render()
    end
  end,
  desc = 'sightline: lay the pane bar out for its new width',
})

api.nvim_create_autocmd('ModeChanged', {
  group = group,
  callback = function()
    if S.folds_stale and not api.nvim_get_mode().mode:match('^[iR]') then
      folds.refresh()
    end
  end,
  desc = 'sightline: the transcript folds a delta brought in Insert mode',
})

api.nvim_create_autocmd('TabEnter', {
  group = group,
  callback = function()
    local id = state.of_tab()
    if id then
      state.use(id)
    end
  end,
  desc = "sightline: the tab page's pane is the active one",
})

api.nvim_create_autocmd('WinScrolled', {
  group = group,
  callback = function()
    if S.tbuf and #S.md_pending > 0 then
      markdown.prefetch()
    end
  end,
  desc = 'sightline: render the Markdown around the transcript view ahead',
})

return M

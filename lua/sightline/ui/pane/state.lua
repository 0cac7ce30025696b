---@mod sightline.ui.pane.state  What the pane's modules share: its buffers, windows and spans.
local M = {}
local api = vim.api

M.S = {
  tbuf = nil, ---@type integer?
  cbuf = nil, ---@type integer?
  twin = nil, ---@type integer?
  cwin = nil, ---@type integer?
  timer = nil, ---@type uv.uv_timer_t?
  since = nil, ---@type integer?
  frame = 1,
  prompts = {}, ---@type string[] prompts sent from the composer, oldest first
  prompt_index = nil, ---@type integer?
  draft = nil, ---@type string[]? the unsent text <Up> stepped away from, restored on <Down>
  editing = nil, ---@type integer? the record of the earlier message the composer's text replaces
  queued = {}, ---@type {id: integer, text: string, steer: boolean}[] messages waiting for the turn to end
  notice = nil, ---@type {text: string, level: integer, expires: boolean?}? the last message the pane shows
  folds = {}, ---@type integer[][] fold spans [first, end) as the core sent them, sorted
  folds_stale = false,
  cuts = {}, ---@type integer[][] rows [first, end) of each line cut into rows, sorted
  resync = false, -- a delta was lost: the whole transcript is asked for (transcript.lua) -- a delta changed the folds in Insert mode: recomputed when it ends
  md_resume = nil, ---@type {first: integer, row: integer}? where the last Markdown span re-parses
  -- Markdown spans no window has shown yet, sorted, as {from, end, first}: rendered when a
  -- window first draws them (a reopened long conversation renders only what is in view).
  md_pending = {}, ---@type integer[][]
  md_last = nil, ---@type integer? the first row of the transcript's last Markdown span
  md_spans = {}, ---@type integer[][] every Markdown span as the core sent it, {first, end}, sorted
}

---@param b integer?
---@return boolean?
function M.valid_buf(b)
  return b and api.nvim_buf_is_valid(b)
end

---@param w integer?
---@return boolean?
function M.valid_win(w)
  return w and api.nvim_win_is_valid(w)
end

return M

---@mod sightline.port.apply  An accepted edit or a new file, applied in Neovim (the port's mechanism).
---The core decides; this module only touches buffers and windows. An accepted edit is one
---ranged nvim_buf_set_text after an undo break, so one `u` restores the buffer exactly and
---marks, extmarks and folds outside the change stay put.
local M = {}
local api = vim.api
local buffers = require('sightline.port.buffers')

---The buffer of `path`, loaded if needed and up to date with its file (buffers.load), or why
---an agent edit cannot go there.
---@param path string
---@param failed string how a failed load is told ('could not be loaded', …)
---@return integer? buf, string? err, sightline.Disk? disk
local function editable(path, failed)
  local buf, err, disk = buffers.load(path)
  if not buf then
    return nil, failed .. ': ' .. tostring(err)
  end
  return buf, buffers.unchangeable(buf), disk
end

---(row, col) advanced by `n` bytes through `lines` joined by "\n" (0-based row and col).
---@param lines string[]
---@param row integer
---@param col integer
---@param n integer
---@return integer row, integer col
local function advance(lines, row, col, n)
  while row + 1 < #lines and col + n > #lines[row + 1] do
    n = n - (#lines[row + 1] - col) - 1
    row, col = row + 1, 0
  end
  return row, col + n
end

---Close the current undo block, so the next change is an undo step of its own.
---@param buf integer
function M.undo_break(buf)
  api.nvim_buf_call(buf, function()
    vim.cmd('let &g:undolevels = &g:undolevels')
  end)
end
local undo_break = M.undo_break

---@class sightline.Applied
---@field ok? boolean
---@field saved? boolean
---@field why? string 'nofile' | 'modified' | 'changed_on_disk' | 'write_failed' when not saved
---@field error? string
---@field stale? boolean the anchor no longer occurs exactly once
---@field count? integer how often it occurs

---A normal :write, so the user's own autocmds (format on save…) run.
---@param buf integer
---@return sightline.Applied
local function write(buf)
  local ok, err = pcall(api.nvim_buf_call, buf, function()
    vim.cmd('silent write')
  end)
  if not ok then
    return { ok = true, saved = false, why = 'write_failed', error = tostring(err) }
  end
  return { ok = true, saved = true }
end

---The save rule: write a file-backed buffer the user had no unsaved changes in.
---A normal :write, so the user's own autocmds (format on save…) run.
---@param buf integer
---@param was_modified boolean
---@param changed_on_disk string?
---@return sightline.Applied
local function save(buf, was_modified, changed_on_disk)
  if changed_on_disk then
    return { ok = true, saved = false, why = 'changed_on_disk', error = changed_on_disk }
  elseif not buffers.has_file(buf) then
    return { ok = true, saved = false, why = 'nofile' }
  elseif was_modified then
    return { ok = true, saved = false, why = 'modified' }
  end
  return write(buf)
end

---Before an agent edit of `buf` (found or loaded up to date by port/buffers.lua, which gave
---`disk`): note whether the user had unsaved changes. Every agent edit (this module's,
---Change with Agent's) goes begin → change → finish.
---@param buf integer
---@param disk sightline.Disk? the file changed on disk and the buffer was kept
---@return {modified: boolean, changed_on_disk: string?}
function M.begin(buf, disk)
  return { modified = vim.bo[buf].modified, changed_on_disk = disk }
end

---After an agent edit: the buffer becomes listed, and the save rule applies.
---@param buf integer
---@param state {modified: boolean, changed_on_disk: string?} from begin()
---@return sightline.Applied
function M.finish(buf, state)
  vim.bo[buf].buflisted = true
  return save(buf, state.modified, state.changed_on_disk)
end

---@class sightline.EditSpec
---@field path string
---@field anchor string must occur exactly once in the buffer
---@field rel_start integer byte offset in the anchor where the change starts
---@field rel_end integer byte offset in the anchor where it ends (exclusive)
---@field text string the replacement

---Apply an accepted edit: find its anchor (exactly once, else stale), replace the span.
---@param spec sightline.EditSpec
---@return sightline.Applied
function M.apply(spec)
  local buf, why, disk = editable(spec.path, 'could not be loaded')
  if why then
    return { error = why }
  end
  local state = M.begin(buf, disk)
  -- The search runs here, in Neovim, so the core never ships the buffer for it.
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  local count, row, col = require('sightline.port.unique').find(lines, spec.anchor)
  if count ~= 1 or not row or not col then
    return { stale = true, count = count or 0 }
  end
  local sr, sc = advance(lines, row, col, spec.rel_start)
  local er, ec = advance(lines, row, col, spec.rel_end)
  undo_break(buf)
  api.nvim_buf_set_text(buf, sr, sc, er, ec, vim.split(spec.text, '\n', { plain = true }))
  return M.finish(buf, state)
end

---Create a new file's buffer with `text` and write it (refused if the file exists by now).
---@param spec {path: string, text: string}
---@return sightline.Applied
function M.create(spec)
  if vim.fn.filereadable(spec.path) == 1 or vim.fn.isdirectory(spec.path) == 1 then
    return { error = 'exists now (it was created since the proposal)' }
  end
  local existing = buffers.find(spec.path)
  if existing and api.nvim_buf_is_loaded(existing) then
    local lines = api.nvim_buf_get_lines(existing, 0, -1, false)
    if #lines > 1 or lines[1] ~= '' then
      return { error = 'has a buffer with text in it (not saved yet); not overwritten' }
    end
  end
  local buf, why = editable(spec.path, 'could not be created')
  if why then
    return { error = why }
  end
  local text = spec.text:gsub('\n$', '')
  undo_break(buf)
  api.nvim_buf_set_text(buf, 0, 0, 0, 0, vim.split(text, '\n', { plain = true }))
  vim.bo[buf].buflisted = true
  vim.fn.mkdir(vim.fn.fnamemodify(spec.path, ':h'), 'p')
  return write(buf)
end

return M

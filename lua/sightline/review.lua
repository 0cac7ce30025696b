---@mod sightline.review  What the review gate does in Neovim: apply an accepted edit, the compare view.
---The core decides; this module only touches buffers and windows. An accepted edit is one
---ranged nvim_buf_set_text after an undo break, so one `u` restores the buffer exactly and
---marks, extmarks and folds outside the change stay put.
local M = {}
local api = vim.api
local buffers = require('sightline.buffers')

---The buffer of `path`, loaded if needed, or why an agent edit cannot go there.
---@param path string
---@param failed string how a failed load is told ('could not be loaded', …)
---@return integer? buf, string? err
local function editable(path, failed)
  local buf, err = buffers.load(path)
  if not buf then
    return nil, failed .. ': ' .. tostring(err)
  end
  return buf, buffers.unchangeable(buf)
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

---`:checktime` the buffer without any prompt. An unmodified buffer with 'autoread' is
---reloaded silently (so nothing on disk is lost); otherwise a change on disk is reported.
---@param buf integer
---@return string? reason v:fcs_reason when the file changed on disk since it was loaded
local function checktime(buf)
  if vim.bo[buf].buftype ~= '' or api.nvim_buf_get_name(buf) == '' then
    return nil
  end
  local reason
  local group = api.nvim_create_augroup('sightline.review.checktime', { clear = true })
  api.nvim_create_autocmd('FileChangedShell', {
    group = group,
    buffer = buf,
    callback = function()
      reason = vim.v.fcs_reason
      vim.v.fcs_choice = '' -- keep the buffer as it is; the write is refused below
    end,
  })
  pcall(vim.cmd.checktime, buf)
  api.nvim_del_augroup_by_id(group)
  return reason
end

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

---Before an agent edit of `buf`: `:checktime` it and note whether the user had unsaved
---changes. Every agent edit (this module's, Change with Agent's) goes begin → change → finish.
---@param buf integer
---@return {modified: boolean, changed_on_disk: string?}
function M.begin(buf)
  local changed_on_disk = checktime(buf)
  return { modified = vim.bo[buf].modified, changed_on_disk = changed_on_disk }
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
  local buf, why = editable(spec.path, 'could not be loaded')
  if why then
    return { error = why }
  end
  local state = M.begin(buf)
  -- The search runs here, in Neovim, so the core never ships the buffer for it.
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  local count, row, col = require('sightline.unique').find(lines, spec.anchor)
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

-- The compare view ------------------------------------------------------------------------

---@class sightline.Compare
---@field id integer
---@field tab integer
---@field before integer
---@field after integer

---@type sightline.Compare?
local C = nil

---@param text string
---@return string[]
local function text_lines(text)
  return vim.split((text:gsub('\n$', '')), '\n', { plain = true })
end

---@param name string
---@param text string
---@param filetype string
---@return integer
local function side(name, text, filetype)
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide' -- kept until the decision: edits in it must survive :q
  vim.bo[buf].swapfile = false
  pcall(api.nvim_buf_set_name, buf, name)
  api.nvim_buf_set_lines(buf, 0, -1, false, text_lines(text))
  vim.bo[buf].filetype = filetype
  vim.b[buf].sightline_role = 'compare'
  return buf
end

---@param buf integer
local function compare_keys(buf)
  local keys = require('sightline.config').get().pane.keys
  local function decide(decision)
    return function()
      local ok, err = require('sightline').decide(decision)
      if not ok and err then
        vim.notify(err, vim.log.levels.WARN)
      end
    end
  end
  for key, fn in pairs({ [keys.accept] = decide('accept'), [keys.reject] = decide('reject') }) do
    if key and key ~= '' then
      vim.keymap.set('n', key, fn, { buffer = buf, nowait = true, desc = 'sightline: decide' })
    end
  end
end

---The compare view's hints: each side's bar says what it is and which keys decide.
---@param bwin integer
---@param awin integer
---@param p sightline.ProposalView
local function compare_hints(bwin, awin, p)
  local keys = require('sightline.config').get().pane.keys
  local decide = ('%s accept · %s reject'):format(keys.accept or '', keys.reject or ''):gsub('%%', '%%%%')
  local file = p.path:gsub('%%', '%%%%')
  vim.wo[bwin].winbar = ('%%#SightlineCompareHint#before%%* %s (read-only)%%<'):format(file)
  vim.wo[awin].winbar = ('%%#SightlineCompareHint#after: edit it, then %s%%* · %s%%<'):format(decide, file)
end

---@class sightline.ProposalView
---@field id integer
---@field path string workspace-relative
---@field before string
---@field after string

---Open (or go to) a tab with two diff windows: before (read-only) and after (editable).
---What the after side holds when the proposal is accepted is what gets applied.
---@param p sightline.ProposalView
---@return boolean
function M.compare(p)
  if C and C.id == p.id and api.nvim_tabpage_is_valid(C.tab) then
    api.nvim_set_current_tabpage(C.tab)
    return true
  end
  M.close_compare()
  local ft = vim.filetype.match({ filename = p.path }) or ''
  -- Named by the file's tail: the tab's label (the current buffer's name, its directories
  -- shortened) stays readable, e.g. `app.py · after (proposal 3)`.
  local tail = vim.fn.fnamemodify(p.path, ':t')
  local before = side(('%s · before (proposal %d)'):format(tail, p.id), p.before, ft)
  local after = side(('%s · after (proposal %d)'):format(tail, p.id), p.after, ft)
  vim.bo[before].modifiable = false
  vim.cmd('tab sbuffer ' .. before)
  vim.cmd('diffthis')
  local bwin = api.nvim_get_current_win()
  vim.cmd('rightbelow vertical sbuffer ' .. after)
  vim.cmd('diffthis')
  C = { id = p.id, tab = api.nvim_get_current_tabpage(), before = before, after = after }
  compare_hints(bwin, api.nvim_get_current_win(), p)
  compare_keys(before)
  compare_keys(after)
  return true
end

---The after side's lines if the compare view of proposal `id` exists; closes it.
---@param id integer
---@return string[]?
function M.take_after(id)
  if not C or C.id ~= id or not api.nvim_buf_is_valid(C.after) then
    M.close_compare(id)
    return nil
  end
  local lines = api.nvim_buf_get_lines(C.after, 0, -1, false)
  M.close_compare(id)
  return lines
end

---Close the compare view (of proposal `id`, or whichever is open) and drop its buffers.
---@param id integer?
function M.close_compare(id)
  if not C or (id and C.id ~= id) then
    return
  end
  local view = C
  C = nil
  for _, buf in ipairs({ view.before, view.after }) do
    if api.nvim_buf_is_valid(buf) then
      pcall(api.nvim_buf_delete, buf, { force = true })
    end
  end
end

return M

---@mod sightline.ui.compare  The compare view of a proposal: before and after in a diff tab.
---The after side may be edited; what it holds when the proposal is accepted is applied
---(the core takes it through port.take_after). It shows the hunks decided so far: the core
---leaves the rejected ones out of the after side and labels each decided one (`marks`), and
---sends both again when a hunk is decided while the view is open (refresh).
local M = {}
local api = vim.api

M.ns = api.nvim_create_namespace('sightline.compare')

---@class sightline.Compare
---@field id integer
---@field tab integer
---@field before integer
---@field after integer
---@field tick integer the after side's 'changedtick' when sightline last set it

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
        require('sightline.ui.message').notify(err, vim.log.levels.WARN)
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
---@field after string what accepting the rest writes: the hunks not rejected
---@field marks {row: integer, text: string}[]? a label per decided hunk, on the after side

---Label the decided hunks on the after side.
---@param buf integer
---@param marks {row: integer, text: string}[]?
local function draw_marks(buf, marks)
  api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
  local last = api.nvim_buf_line_count(buf) - 1
  for _, m in ipairs(marks or {}) do
    api.nvim_buf_set_extmark(buf, M.ns, math.max(0, math.min(m.row, last)), 0, {
      virt_text = { { ' ' .. m.text, 'SightlineNote' } },
    })
  end
end

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
  draw_marks(after, p.marks)
  C = { id = p.id, tab = api.nvim_get_current_tabpage(), before = before, after = after }
  C.tick = vim.b[after].changedtick
  compare_hints(bwin, api.nvim_get_current_win(), p)
  compare_keys(before)
  compare_keys(after)
  return true
end

---Whether the user changed the after side of proposal `id`'s compare view.
---@param id integer
---@return boolean
function M.edited(id)
  return C ~= nil and C.id == id and api.nvim_buf_is_valid(C.after) and vim.b[C.after].changedtick ~= C.tick
end

---Show a hunk decided while the view is open (the user's edits are never there: the inline
---keys refuse while the after side holds some, see edited()).
---@param p sightline.ProposalView
function M.refresh(p)
  if not C or C.id ~= p.id or not api.nvim_buf_is_valid(C.after) then
    return
  end
  local buf = C.after
  -- Not undoable: `u` there must not bring back a hunk the user rejected.
  local levels = vim.bo[buf].undolevels
  vim.bo[buf].undolevels = -1
  api.nvim_buf_set_lines(buf, 0, -1, false, text_lines(p.after))
  vim.bo[buf].undolevels = levels
  vim.bo[buf].modified = false
  draw_marks(buf, p.marks)
  C.tick = vim.b[buf].changedtick
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

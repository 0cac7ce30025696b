---@mod sightline.ui.inline  The edit proposal that waits, drawn in its own buffer, hunk by hunk.
---The core computes the hunks (python/sightline/domain/diff.py) and every decision; this module only
---draws them with extmarks (the buffer and its 'changedtick' never change), sets the keys while
---they show, and forwards what the user decides.
---
---The buffer still holds the text before the edit, so the lines the edit removes are the
---buffer's own lines (line highlight SightlineHunkDelete) and the lines it adds are virtual
---lines below them (SightlineHunkAdd). The number column, where one shows, is coloured by the
---hunk's kind; a sign only where every window already shows a sign column (it must never
---open one and shift the text). Extmarks follow the user's edits; what is applied is
---re-anchored by text when the decision is complete (sightline.port.apply / sightline.port.scope).
local M = {}
local api = vim.api

M.ns = api.nvim_create_namespace('sightline.inline')

local GROUPS = { add = 'SightlineHunkAdd', delete = 'SightlineHunkDelete', change = 'SightlineHunkChange' }
local BAR_GLYPH = '▎'

---Buffer-local default keys, set only where free while a proposal shows.
M.KEYS = {
  { lhs = ']h', plug = '<Plug>(sightline-hunk-next)' },
  { lhs = '[h', plug = '<Plug>(sightline-hunk-prev)' },
  { lhs = '<Leader>ha', plug = '<Plug>(sightline-hunk-accept)' },
  { lhs = '<Leader>hr', plug = '<Plug>(sightline-hunk-reject)' },
  { lhs = '<Leader>hw', plug = '<Plug>(sightline-hunk-reject-why)' },
  { lhs = '<Leader>hA', plug = '<Plug>(sightline-hunk-accept-all)' },
  { lhs = '<Leader>hR', plug = '<Plug>(sightline-hunk-reject-all)' },
}
---In the pane's transcript: a guided look at the hunks (reveal, the cursor stays).
M.PANE_KEYS = {
  { lhs = ']h', plug = '<Plug>(sightline-hunk-look-next)' },
  { lhs = '[h', plug = '<Plug>(sightline-hunk-look-prev)' },
}

---@class sightline.InlineHunk
---@field start integer 0-based first row in the text before the edit
---@field old integer how many of the buffer's lines it removes
---@field new string[] the lines it adds
---@field kind string add | delete | change
---@field mark integer the extmark that tracks where it is
---@field marks integer[] every extmark drawn for it
---@field above boolean? its new lines are drawn above row 0 (an addition at the start)
---@field decided string? accept | reject

---@class sightline.InlineState
---@field id integer the proposal
---@field buf integer
---@field hunks sightline.InlineHunk[]
---@field keys {buf: integer, lhs: string, plug: string}[] the default keys this module set
---@field look integer the hunk the pane's guided look is at (0 = none yet)
---@field ctx sightline.InlineCtx how hunks are drawn in this buffer

---@type sightline.InlineState?
local A = nil

---@param msg string
local function warn(msg)
  require('sightline.ui.message').notify(msg, vim.log.levels.WARN)
end

---A line as a virtual line shows it: tabs expanded (virtual text does not expand them) and
---padded to the editor's width so the highlight reads as a whole line.
---@param line string
---@param ts integer
---@param width integer
---@return string
local function virt_text(line, ts, width)
  if line:find('\t', 1, true) then
    local out, col = {}, 0
    for ch in line:gmatch('[^\t]*\t?') do
      local text = ch:gsub('\t$', '')
      out[#out + 1] = text
      col = col + api.nvim_strwidth(text)
      if ch:sub(-1) == '\t' then
        local n = ts - col % ts
        out[#out + 1] = (' '):rep(n)
        col = col + n
      end
    end
    line = table.concat(out)
  end
  local pad = width - api.nvim_strwidth(line)
  return pad > 0 and line .. (' '):rep(pad) or line
end

---@class sightline.InlineCtx
---@field rows integer the buffer's line count
---@field ts integer its 'tabstop'
---@field width integer the editor's width
---@field signs boolean a sign may be drawn

---Draw a hunk: its removed lines highlighted, its new lines as virtual lines, its label.
---@param buf integer
---@param h sightline.InlineHunk
---@param label string
---@param ctx sightline.InlineCtx
local function draw(buf, h, label, ctx)
  local group = GROUPS[h.kind] or GROUPS.change
  h.marks = {}
  label = { { label, 'SightlineNote' } }
  if h.old > 0 then
    local s = math.min(h.start, ctx.rows - 1)
    local e = math.min(h.start + h.old, ctx.rows) - 1
    local opts = {
      end_row = e,
      line_hl_group = GROUPS.delete,
      number_hl_group = group,
      virt_text = label,
      priority = 4000,
    }
    if ctx.signs then
      opts.sign_text, opts.sign_hl_group = BAR_GLYPH, group
    end
    h.mark = api.nvim_buf_set_extmark(buf, M.ns, s, 0, opts)
    h.marks[1] = h.mark
  end
  if #h.new > 0 then
    local anchor, above = math.min(h.start + h.old, ctx.rows) - 1, false
    if anchor < 0 then
      anchor, above = 0, true
    end
    h.above = above
    local lines = {}
    for i, line in ipairs(h.new) do
      lines[i] = { { virt_text(line, ctx.ts, ctx.width), GROUPS.add } }
    end
    local opts = { virt_lines = lines, virt_lines_above = above, priority = 4000 }
    if h.old == 0 then
      opts.virt_text = label
    end
    local id = api.nvim_buf_set_extmark(buf, M.ns, anchor, 0, opts)
    h.marks[#h.marks + 1] = id
    h.mark = h.mark or id
  end
end

---Rows the hunk covers now (0-based, inclusive): its removed lines, or for a pure addition
---the line its new lines are drawn at.
---@param h sightline.InlineHunk
---@return integer? first, integer? last
local function rows(buf, h)
  local pos = api.nvim_buf_get_extmark_by_id(buf, M.ns, h.mark, { details = true })
  if not pos[1] then
    return nil
  end
  local last = pos[3] and pos[3].end_row or pos[1]
  return pos[1], math.max(pos[1], last)
end

---Set a default key where it is free (no mapping, global or of this buffer, uses it).
---@param buf integer
---@param key {lhs: string, plug: string}
local function set_key(buf, key)
  local free = api.nvim_buf_call(buf, function()
    return vim.fn.maparg(key.lhs, 'n') == ''
  end)
  if free then
    vim.keymap.set('n', key.lhs, key.plug, { buffer = buf, remap = true, desc = 'sightline: ' .. key.plug })
    table.insert(A.keys, { buf = buf, lhs = key.lhs, plug = key.plug })
  end
end

local function defaults_wanted()
  local ok, cfg = pcall(function()
    return require('sightline.config').get()
  end)
  return not (ok and cfg.mappings == false)
end

---Remove the keys this module set that are still its own (the user may have mapped them since).
local function remove_keys(state)
  for _, k in ipairs(state.keys) do
    if api.nvim_buf_is_valid(k.buf) then
      api.nvim_buf_call(k.buf, function()
        local m = vim.fn.maparg(k.lhs, 'n', false, true)
        if m.buffer == 1 and m.rhs == k.plug then
          pcall(vim.keymap.del, 'n', k.lhs, { buffer = k.buf })
        end
      end)
    end
  end
  state.keys = {}
end

---@class sightline.HunkSpec
---@field id integer the proposal
---@field buffer integer
---@field path string
---@field hunks {start: integer, old: integer, new: string[], kind: string}[]

---Draw a proposal's hunks in its buffer (replacing any other proposal's). Called by the core.
---@param spec sightline.HunkSpec
---@return boolean drawn
function M.show(spec)
  M.clear()
  local buf = spec.buffer
  if type(buf) ~= 'number' or not api.nvim_buf_is_valid(buf) or not api.nvim_buf_is_loaded(buf) then
    return false
  end
  local rows_n = api.nvim_buf_line_count(buf)
  local ctx = {
    rows = rows_n,
    ts = math.max(1, vim.bo[buf].tabstop),
    width = vim.o.columns,
    signs = require('sightline.reveal.paint').signs_safe(buf),
  }
  -- `pane`: the pane of the conversation that made it (its hunk decisions go there).
  A = { id = spec.id, pane = spec.pane or 1, buf = buf, hunks = {}, keys = {}, look = 0, ctx = ctx }
  local n = #spec.hunks
  for i, data in ipairs(spec.hunks) do
    local h = { start = data.start, old = data.old, new = data.new, kind = data.kind }
    draw(buf, h, (' hunk %d/%d'):format(i, n), ctx)
    A.hunks[i] = h
  end
  if defaults_wanted() then
    for _, key in ipairs(M.KEYS) do
      set_key(buf, key)
    end
  end
  local pane = package.loaded['sightline.ui.pane']
  local ok, bufs = pcall(function()
    return pane and require('sightline.ui.pane.state').with(A.pane, pane.buffers)
  end)
  if ok and bufs and bufs.transcript and api.nvim_buf_is_valid(bufs.transcript) then
    for _, key in ipairs(M.PANE_KEYS) do
      set_key(bufs.transcript, key)
    end
  end
  return true
end

---Remove the drawing and the keys (of proposal `id`, or whichever shows). Called by the core
---when the proposal is decided, and by the host when the core exits (no stale marks).
---@param id integer?
function M.clear(id)
  if not A or (id and A.id ~= id) then
    return
  end
  local state = A
  A = nil
  if api.nvim_buf_is_valid(state.buf) then
    api.nvim_buf_clear_namespace(state.buf, M.ns, 0, -1)
  end
  remove_keys(state)
end

---A turn of pane `pane` ended: its proposal's drawing goes (another pane's stays).
---@param pane integer
function M.clear_pane(pane)
  if A and A.pane == pane then
    M.clear()
  end
end

---The proposal shown now, for tests and integrations: its id, buffer and per-hunk decisions.
---@return {id: integer, buffer: integer, hunks: {start: integer, decided: string?}[]}?
function M.shown()
  if not A then
    return nil
  end
  local out = {}
  for i, h in ipairs(A.hunks) do
    local s = rows(A.buf, h)
    out[i] = { start = s, decided = h.decided }
  end
  return { id = A.id, buffer = A.buf, hunks = out }
end

---The undecided hunks as {index, first row, last row}, in buffer order.
---@return {[1]: integer, [2]: integer, [3]: integer}[]
local function pending()
  local out = {}
  for i, h in ipairs(A.hunks) do
    if not h.decided then
      local s, e = rows(A.buf, h)
      if s then
        out[#out + 1] = { i, s, e }
      end
    end
  end
  table.sort(out, function(x, y)
    return x[2] < y[2] or (x[2] == y[2] and x[1] < y[1])
  end)
  return out
end

---@return boolean
local function here()
  if not A then
    warn('sightline: no edit proposal is shown')
    return false
  end
  if api.nvim_get_current_buf() ~= A.buf then
    warn('sightline: the edit proposal is shown in buffer ' .. A.buf .. ', not this one')
    return false
  end
  return true
end

---Move the cursor to the `count`-th undecided hunk after (dir 1) or before (dir -1) it.
---@param dir integer
---@param count integer?
function M.jump(dir, count)
  if not here() then
    return
  end
  local row = api.nvim_win_get_cursor(0)[1] - 1
  local list = pending()
  local target
  count = math.max(1, count or 1)
  if dir > 0 then
    for _, p in ipairs(list) do
      if p[2] > row then
        target, count = p, count - 1
        if count == 0 then
          break
        end
      end
    end
  else
    for i = #list, 1, -1 do
      if list[i][2] < row then
        target, count = list[i], count - 1
        if count == 0 then
          break
        end
      end
    end
  end
  if not target then
    warn(('sightline: no %s undecided hunk'):format(dir > 0 and 'next' or 'previous'))
    return
  end
  vim.cmd("normal! m'") -- so '' and <C-o> come back
  api.nvim_win_set_cursor(0, { target[2] + 1, 0 })
end

---The undecided hunk under the cursor.
---@return integer? index
local function under_cursor()
  local row = api.nvim_win_get_cursor(0)[1] - 1
  for _, p in ipairs(pending()) do
    if p[2] <= row and row <= p[3] then
      return p[1]
    end
  end
end

---Redraw after the core answered, so that the buffer shows what will be written: an accepted
---hunk keeps its drawing (its new text) under an accepted label, a rejected one loses it (its
---lines stay) and keeps a label.
---@param decisions string[]
local function settle(decisions)
  if not A then
    return -- the core cleared the drawing already (the decision was complete)
  end
  local left, n = false, #A.hunks
  A.ctx.rows = api.nvim_buf_line_count(A.buf)
  for i, h in ipairs(A.hunks) do
    local d = decisions[i]
    if d == '' or d == nil or d == vim.NIL then
      left = true
    elseif not h.decided then
      -- Where the hunk is now (its marks followed the user's edits), as a start row.
      local s = rows(A.buf, h) or 0
      if h.old == 0 and not h.above then
        s = s + 1 -- an addition is drawn below the line before it
      end
      for _, id in ipairs(h.marks) do
        pcall(api.nvim_buf_del_extmark, A.buf, M.ns, id)
      end
      h.decided = d
      if d == 'accept' then
        h.start, h.mark = s, nil
        draw(A.buf, h, (' ✔ hunk %d/%d accepted'):format(i, n), A.ctx)
      else
        h.mark = api.nvim_buf_set_extmark(A.buf, M.ns, math.min(s, A.ctx.rows - 1), 0, {
          virt_text = { { (' ✗ hunk %d/%d rejected'):format(i, n), 'SightlineNote' } },
        })
        h.marks = { h.mark }
      end
    end
  end
  if not left then
    M.clear()
  end
end

---@param params table
local function forward(params)
  params.proposal = A.id
  params.pane = A.pane
  local res, err = require('sightline.host').request('agent.hunk', params)
  if not res then
    warn(err or 'sightline: the decision was not taken')
    return
  end
  settle(res.decisions)
  if res.compare then
    require('sightline.ui.compare').refresh(res.compare)
  end
end

---Accept or reject the hunk under the cursor (`all`: every undecided hunk), with a note for
---the model when rejecting (`why`: asked for in a one-line prompt).
---@param decision 'accept'|'reject'
---@param opts {all?: boolean, why?: boolean}?
function M.decide(decision, opts)
  opts = opts or {}
  if not here() then
    return
  end
  local compare = package.loaded['sightline.ui.compare']
  if compare and compare.edited(A.id) then
    -- Its after side is what a whole accept applies; a hunk's decision would rewrite it.
    warn('sightline: you edited this proposal in the compare view: accept or reject it there')
    return
  end
  local params = { decision = decision }
  if not opts.all then
    local index = under_cursor()
    if not index then
      warn('sightline: no undecided hunk under the cursor (]h goes to the next one)')
      return
    end
    params.hunk = index - 1
  end
  if not opts.why then
    return forward(params)
  end
  local id = A.id
  vim.ui.input({ prompt = 'Why reject this hunk? (told to the model) ' }, function(reason)
    if reason == nil or not A or A.id ~= id then
      return -- cancelled, or the proposal was decided meanwhile
    end
    params.reason = reason
    forward(params)
  end)
end

---From the pane: show the next (dir 1) or previous (dir -1) undecided hunk with reveal — in
---place, scrolled or in a peek — without moving any cursor.
---@param dir integer
---@return string? what reveal answered
function M.look(dir)
  if not A then
    warn('sightline: no edit proposal is shown')
    return
  end
  local list = pending()
  if #list == 0 then
    return
  end
  local at = 0
  for i, p in ipairs(list) do
    if p[1] == A.look then
      at = i
    end
  end
  at = ((at - 1 + dir) % #list) + 1
  if A.look == 0 and dir < 0 then
    at = #list
  end
  local p = list[at]
  A.look = p[1]
  return require('sightline').reveal({ buffer = A.buf, start_line = p[2] + 1, end_line = p[3] + 1 })
end

return M

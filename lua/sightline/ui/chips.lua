---@mod sightline.ui.chips  Code references in the transcript: paint, track, navigate on <CR>.
local M = {}
local api = vim.api

local ns = api.nvim_create_namespace('sightline.chip')
local track_ns = api.nvim_create_namespace('sightline.chip_target')
---@class sightline.ChipTarget what a code reference in the transcript points at
---@field file_path? string
---@field buffer? integer the buffer of a selection, when it is loaded
---@field start_line? integer 1-based
---@field end_line? integer 1-based, inclusive
---@field start_row? integer 0-based (a selection's flat range)
---@field start_col? integer
---@field end_row? integer
---@field end_col? integer
---@field url? string an `@url:` page (opened with vim.ui.open; the model has no id for it)
---@field attachment_id? string the id the model reads
---@field mark? integer the extmark that tracks the range in its buffer

local targets = {} ---@type table<integer, sightline.ChipTarget> transcript extmark id → target
-- attachment_id → target: the ids the model reads (computed by the core, sightline/ui/chips.py)
-- resolve here, in Neovim, so reveal_attachment works for the agent and the MCP server alike.
local by_id = {} ---@type table<string, sightline.ChipTarget>
local drawn_in = nil ---@type integer? the transcript buffer the chips are marked in

---Mark the chips of a delta in the transcript buffer (rows from `start` were just replaced).
---@param buf integer the transcript buffer
---@param start integer 0-based first replaced row
---@param chips {row: integer, col: integer, end_col: integer, target: sightline.ChipTarget}[]?
function M.apply(buf, start, chips)
  -- Only ids still drawn resolve: a cleared transcript's chips are gone for the model too.
  -- Only the chips from `start` on are looked at (the replaced rows' marks sit there), so a
  -- streamed delta costs the same however many chips the transcript holds.
  if buf ~= drawn_in then -- a new transcript buffer: the old one's chips are gone
    targets, by_id, drawn_in = {}, {}, buf
  end
  local old = {}
  for _, m in ipairs(api.nvim_buf_get_extmarks(buf, ns, { start, 0 }, -1, {})) do
    local target = targets[m[1]]
    targets[m[1]] = nil
    local aid = target and target.attachment_id
    if type(aid) == 'string' and by_id[aid] == target then
      by_id[aid], old[aid] = nil, target
    end
  end
  api.nvim_buf_clear_namespace(buf, ns, start, -1)
  for _, c in ipairs(chips or {}) do
    local ok, id =
      pcall(api.nvim_buf_set_extmark, buf, ns, c.row, c.col, { end_col = c.end_col, hl_group = 'SightlineChip' })
    if ok then
      local aid = c.target.attachment_id
      -- A chip drawn again (a rebuilt transcript) keeps its tracked range: the selection
      -- it names may have moved since.
      local known = type(aid) == 'string' and (by_id[aid] or old[aid]) or nil
      targets[id] = known or M.track(c.target)
      if type(aid) == 'string' then
        by_id[aid] = targets[id]
      end
    end
  end
end

---A selection's chip follows later edits: an extmark in its own buffer carries the range.
---@param target sightline.ChipTarget
---@return sightline.ChipTarget
function M.track(target)
  local b = target.buffer
  if type(b) == 'number' and api.nvim_buf_is_valid(b) and not target.mark then
    local ok, mark = pcall(
      api.nvim_buf_set_extmark,
      b,
      track_ns,
      target.start_row,
      target.start_col,
      { end_row = target.end_row, end_col = target.end_col, right_gravity = false, end_right_gravity = true }
    )
    if ok then
      target.mark = mark
    end
  end
  return target
end

---The target as reveal/go_to_position arguments, following the tracked range if any.
---@param target sightline.ChipTarget
---@return sightline.RevealOpts
function M.resolve(target)
  local opts = { file_path = target.file_path, start_line = target.start_line, end_line = target.end_line }
  local b = target.buffer
  if target.mark and api.nvim_buf_is_valid(b) then
    local pos = api.nvim_buf_get_extmark_by_id(b, track_ns, target.mark, { details = true })
    if pos[1] then
      opts.buffer = b
      opts.start_line, opts.end_line = pos[1] + 1, pos[3].end_row + 1
      local name = api.nvim_buf_get_name(b)
      if name ~= '' then
        opts.file_path = name
      end
    end
  end
  return opts
end

---The chip under the cursor in the transcript window (or the first on its line).
---@param buf integer
---@param win integer
---@return sightline.ChipTarget?
function M.at_cursor(buf, win)
  local row, col = unpack(api.nvim_win_get_cursor(win))
  local marks = api.nvim_buf_get_extmarks(buf, ns, { row - 1, 0 }, { row - 1, -1 }, { details = true })
  local first
  for _, m in ipairs(marks) do
    first = first or m
    if col >= m[3] and col < m[4].end_col then
      return targets[m[1]]
    end
  end
  return first and targets[first[1]]
end

---`attachments.navigate` (reveal | select), as a click on a chip uses it.
---@return string
local function default_how()
  local ok, cfg = pcall(function()
    return require('sightline.config').get().attachments.navigate
  end)
  return ok and cfg == 'select' and 'select' or 'reveal'
end

---Reveal or select a chip's target; the text reveal()/go_to_position() answer.
---@param target sightline.ChipTarget
---@param how string? 'select' | 'reveal' | nil for the default
---@param ctx table? passed on to reveal (secrets)
---@return string
local function open(target, how, ctx)
  if type(target.url) == 'string' then
    -- vim.ui.open answers (process, nil) or (nil, why); pcall adds a thrown error.
    local ok, res, err = pcall(vim.ui.open, target.url)
    if ok and not err then
      return 'OK'
    end
    return ('could not open %s: %s'):format(target.url, tostring(ok and err or res))
  end
  how = how or default_how()
  local opts = M.resolve(target)
  local reveal = require('sightline.reveal')
  if how == 'select' then
    return reveal.go_to_position(
      { file_path = opts.file_path, buffer = opts.buffer, line = opts.start_line, column = 1, end_line = opts.end_line },
      ctx
    )
  end
  return reveal.reveal(opts, ctx)
end

---reveal_attachment: the chip whose attachment_id is given, revealed or selected.
---@param opts {attachment_id: any, select: any}
---@param ctx table? passed on to reveal (secrets)
---@return string
function M.reveal_by_id(opts, ctx)
  if type(opts) ~= 'table' then
    return 'reveal_attachment expects a table of arguments'
  end
  local aid, sel = opts.attachment_id, opts.select
  if type(aid) ~= 'string' or aid == '' then
    return 'attachment_id must be a non-empty string'
  end
  if sel ~= nil and sel ~= vim.NIL and type(sel) ~= 'boolean' then
    return ('select must be true or false, got %s'):format(vim.inspect(sel))
  end
  local target = by_id[aid]
  if not target then
    return ('no attachment %s in the transcript (ids are named in the conversation, e.g. "attachment_id: %s")'):format(
      vim.inspect(aid),
      'sel-1a2b3c4d'
    )
  end
  local how = sel == true and 'select' or (sel == false and 'reveal' or nil)
  return open(target, how, ctx)
end

---<CR>: `attachments.navigate` decides (reveal | select); <S-CR> and gs always select.
---@param how string? 'select' | 'reveal' | nil for the default
---@return boolean false when no chip is under the cursor
function M.navigate(how)
  local buf, win = api.nvim_get_current_buf(), api.nvim_get_current_win()
  local target = M.at_cursor(buf, win)
  if not target then
    return false
  end
  -- The user's own key asks to go there: from the editor window go_to_position moves the
  -- focus and selects (from the pane it would keep the focus, as for the agent's calls).
  local sel = (how or default_how()) == 'select'
  if sel then
    api.nvim_set_current_win(require('sightline.reveal').editor_window())
  end
  local res = open(target, how)
  if sel and res ~= 'OK' and api.nvim_win_is_valid(win) then
    api.nvim_set_current_win(win) -- nothing was selected: the focus goes back to the pane
  end
  if type(res) == 'string' and not vim.startswith(res, 'OK') then
    require('sightline.ui.message').notify('sightline: ' .. res, vim.log.levels.WARN)
  end
  return true
end

return M

--- Reveal: show the user a range of code with a transient highlight, never moving a cursor,
--- the selection or the mode; and go_to_position, its deliberate opposite (moves and selects).
---
--- Vim keeps a window's cursor inside its view, so a reveal paints in place when the range is
--- visible, scrolls a window whose cursor can stay in view, and otherwise opens a *peek*: a
--- non-focusable float on the same buffer that closes with the highlight.
local api = vim.api

local M = {}

M.ns = api.nvim_create_namespace('sightline.reveal')

local ACCENT = 0xFF6B9D
local BAND_ALPHA = 48 / 255
local DEFAULT_DURATION = 3000
local MIN_DURATION, MAX_DURATION = 100, 60000
-- A block glyph fills the cell's height, so the signs of adjacent lines join into one bar.
local BAR_GLYPH = '▎'
local PEEK_ROLE = 'reveal_peek'

---@class sightline.RevealOpts
---@field file_path? string path, relative to the workspace root, `~` expanded
---@field buffer? integer Lua callers only: a buffer instead of a file (0 = current)
---@field start_line? integer 1-based, inclusive
---@field end_line? integer 1-based, inclusive; defaults to start_line
---@field member_key? string `name` or dotted `Outer.name`
---@field syntax_scope? {kind: string, index_in_parent: integer}[]|string list, or its JSON
---@field duration_ms? integer 100..60000

---@class sightline.GotoOpts
---@field file_path? string
---@field buffer? integer
---@field line integer 1-based
---@field column? integer 1-based character column
---@field end_line? integer
---@field end_column? integer 1-based character column, inclusive

---@class sightline.Active  one reveal per buffer
---@field gen integer
---@field timer? uv.uv_timer_t

---@class sightline.Peek
---@field win integer
---@field buf integer
---@field group integer

---@type table<integer, sightline.Active>
local active = {}
---@type sightline.Peek?
local peek = nil
local generation = 0
local hl_ready = false

--- What the last reveal did, for tests and `:checkhealth`: case is visible|scrolled|window|peek.
---@type {case: string, buf: integer, start_line: integer, end_line: integer, win: integer?}?
M.last = nil

-- ---------------------------------------------------------------------------------------------
-- Colours

---@param c integer 0xRRGGBB
---@return integer r, integer g, integer b
local function rgb(c)
  return math.floor(c / 65536) % 256, math.floor(c / 256) % 256, c % 256
end

---@return integer
local function blend(fg, bg, alpha)
  local fr, fg_, fb = rgb(fg)
  local br, bg_, bb = rgb(bg)
  local function mix(f, b)
    return math.floor(b + (f - b) * alpha + 0.5)
  end
  return mix(fr, br) * 65536 + mix(fg_, bg_) * 256 + mix(fb, bb)
end

--- Define SightlineReveal (the band) and SightlineRevealBar (the bar) as `default` groups.
--- Called at load and on ColorScheme by the plugin, and lazily before the first paint.
function M.setup_highlights()
  local normal = api.nvim_get_hl(0, { name = 'Normal', link = false })
  local light = vim.o.background == 'light'
  local base = normal.bg or (light and 0xFFFFFF or 0x000000)
  if normal.bg then
    local r, g, b = rgb(normal.bg)
    light = (0.299 * r + 0.587 * g + 0.114 * b) > 127
  end
  -- cterm: without 'termguicolors' the terminal's real background is unknown, so pick a fixed
  -- pink per background brightness instead of blending.
  api.nvim_set_hl(0, 'SightlineReveal', {
    default = true,
    bg = blend(ACCENT, base, BAND_ALPHA),
    ctermbg = light and 225 or 53,
  })
  api.nvim_set_hl(0, 'SightlineRevealBar', { default = true, fg = ACCENT, ctermfg = 204, bold = true })
end

local function ensure_highlights()
  if hl_ready then
    return
  end
  hl_ready = true
  M.setup_highlights()
  -- The plugin file re-applies them too; this keeps the module correct when required alone.
  api.nvim_create_autocmd('ColorScheme', {
    group = api.nvim_create_augroup('sightline.reveal.hl', { clear = true }),
    callback = function()
      M.setup_highlights()
    end,
  })
end

-- ---------------------------------------------------------------------------------------------
-- Arguments

---@return table
local function config()
  local ok, mod = pcall(require, 'sightline.config')
  if ok and type(mod) == 'table' and type(mod.get) == 'function' then
    local ok2, cfg = pcall(mod.get)
    if ok2 and type(cfg) == 'table' and type(cfg.reveal) == 'table' then
      return cfg.reveal
    end
  end
  -- Without the config module (the module required alone), g:sightline is the user's config.
  local g = vim.g.sightline
  return type(g) == 'table' and type(g.reveal) == 'table' and g.reveal or {}
end

--- msgpack nil arrives as vim.NIL; treat it as absent.
---@param t table
---@return table
local function strip_nil(t)
  local out = {}
  for k, v in pairs(t) do
    if v ~= vim.NIL then
      out[k] = v
    end
  end
  return out
end

--- A whole number (numbers from JSON may be floats like 3.0; the Ex command passes strings).
---@return integer?, string?
local function int_arg(v, name)
  if v == nil then
    return nil
  end
  if type(v) == 'string' and v:match('^%s*[-+]?%d+%s*$') then
    v = tonumber(v)
  end
  if type(v) ~= 'number' or v ~= math.floor(v) or v ~= v or math.abs(v) == math.huge then
    return nil, ('%s must be a whole number, got %s'):format(name, vim.inspect(v))
  end
  return math.floor(v)
end

--- Check the arguments that do not need the file. Returns normalised opts or an error.
---@param opts sightline.RevealOpts
---@return table?, string?
local function check_reveal_args(opts)
  local o = { file_path = opts.file_path, buffer = opts.buffer, member_key = opts.member_key }
  if o.file_path ~= nil and (type(o.file_path) ~= 'string' or o.file_path == '') then
    return nil, 'file_path must be a non-empty string'
  end
  if o.file_path == nil and type(o.buffer) ~= 'number' then
    return nil, 'file_path is required'
  end
  local err
  for _, k in ipairs({ 'start_line', 'end_line', 'duration_ms' }) do
    o[k], err = int_arg(opts[k], k)
    if err then
      return nil, err
    end
  end
  if o.member_key ~= nil and (type(o.member_key) ~= 'string' or vim.trim(o.member_key) == '') then
    return nil, 'member_key must be a non-empty string'
  end
  o.syntax_scope, err = require('sightline.resolve').check_scope(opts.syntax_scope)
  if err then
    return nil, err
  end
  local resolving = o.member_key ~= nil or o.syntax_scope ~= nil
  if o.start_line == nil and (o.end_line ~= nil or not resolving) then
    return nil, 'start_line is required (or give member_key)'
  end
  if o.start_line and o.start_line < 1 then
    return nil, ('start_line must be at least 1, got %d'):format(o.start_line)
  end
  o.end_line = o.end_line or o.start_line
  if o.end_line and o.end_line < o.start_line then
    return nil, ('end_line %d is before start_line %d'):format(o.end_line, o.start_line)
  end
  o.duration_ms = o.duration_ms or int_arg(config().duration_ms, 'duration_ms') or DEFAULT_DURATION
  if o.duration_ms < MIN_DURATION or o.duration_ms > MAX_DURATION then
    return nil,
      ('duration_ms must be between %d and %d, got %d'):format(MIN_DURATION, MAX_DURATION, o.duration_ms)
  end
  return o
end

-- ---------------------------------------------------------------------------------------------
-- Files and buffers

---@param path string
---@return string
local function normalize(path)
  if path:match('^file://') then
    path = vim.uri_to_fname(path)
  end
  if path == '~' or path:sub(1, 2) == '~/' then
    path = vim.uv.os_homedir() .. path:sub(2)
  end
  if vim.fn.isabsolutepath(path) == 0 then
    path = vim.fn.getcwd(-1, -1) .. '/' .. path
  end
  return vim.fs.normalize(path, { expand_env = false })
end

--- The name shown to people: relative to the workspace root when inside it.
---@param path string
---@return string
local function display_name(path)
  local root = vim.fn.getcwd(-1, -1)
  if path:sub(1, #root + 1) == root .. '/' then
    return path:sub(#root + 2)
  end
  return vim.fn.fnamemodify(path, ':~')
end

---@param path string
---@return integer?
local function find_buf(path)
  local bufs = api.nvim_list_bufs()
  for _, b in ipairs(bufs) do
    if api.nvim_buf_get_name(b) == path then
      return b
    end
  end
  -- The same file through a symlink.
  local real = vim.uv.fs_realpath(path)
  if not real then
    return nil
  end
  for _, b in ipairs(bufs) do
    local name = api.nvim_buf_get_name(b)
    if name ~= '' and vim.uv.fs_realpath(name) == real then
      return b
    end
  end
end

--- Load a buffer without showing it. `:edit` runs in Neovim's autocommand window (via
--- nvim_buf_call), which, unlike bufload(), raises SwapExists: a file another Neovim is
--- editing then loads read-only instead of failing with E325.
---@param buf integer
---@return boolean, string?
local function load_hidden(buf)
  local listed = vim.bo[buf].buflisted
  local group = api.nvim_create_augroup('sightline.reveal.swap', { clear = true })
  api.nvim_create_autocmd('SwapExists', {
    group = group,
    callback = function()
      vim.v.swapchoice = 'o'
    end,
  })
  local ok, err = pcall(api.nvim_buf_call, buf, function()
    vim.cmd('silent keepalt keepjumps edit')
  end)
  pcall(api.nvim_del_augroup_by_id, group)
  -- Buffers loaded for the agent stay unlisted until the user opens them.
  if api.nvim_buf_is_valid(buf) and vim.bo[buf].buflisted ~= listed then
    vim.bo[buf].buflisted = listed
  end
  if not ok or not api.nvim_buf_is_loaded(buf) then
    return false, tostring(err or 'not loaded'):gsub('^Vim:', '')
  end
  return true
end

---@class sightline.Target
---@field buf integer
---@field name string shown in messages and the peek title
---@field undo fun() undoes the loading (on errors: an invalid argument changes nothing)

--- Find or load the buffer for file_path (or opts.buffer).
---@param o table
---@return sightline.Target?, string?
local function target(o)
  if o.file_path == nil then
    local buf = o.buffer == 0 and api.nvim_get_current_buf() or o.buffer
    if not api.nvim_buf_is_valid(buf) or not api.nvim_buf_is_loaded(buf) then
      return nil, ('buffer %d is not loaded'):format(o.buffer)
    end
    local name = api.nvim_buf_get_name(buf)
    return { buf = buf, name = name ~= '' and display_name(name) or ('buffer ' .. buf), undo = function() end }
  end
  local path = normalize(o.file_path)
  local name = display_name(path)
  local buf = find_buf(path)
  if buf and api.nvim_buf_is_loaded(buf) then
    return { buf = buf, name = name, undo = function() end }
  end
  if not buf then
    local stat = vim.uv.fs_stat(path)
    if not stat then
      return nil, ('file not found: %s'):format(name)
    elseif stat.type == 'directory' then
      return nil, ('%s is a directory, not a file'):format(name)
    end
  end
  local created = buf == nil
  buf = buf or vim.fn.bufadd(path)
  local ok, err = load_hidden(buf)
  local function undo()
    if api.nvim_buf_is_valid(buf) then
      pcall(api.nvim_buf_delete, buf, { force = true, unload = not created })
    end
  end
  if not ok then
    undo()
    return nil, ('could not load %s: %s'):format(name, err)
  end
  return { buf = buf, name = name, undo = undo }
end

---@param t sightline.Target
---@param s integer
---@param e integer
---@return string?
local function check_range(t, s, e)
  local n = api.nvim_buf_line_count(t.buf)
  if s > n then
    return ('start_line %d is past the end of %s (%d lines)'):format(s, t.name, n)
  end
  if e > n then
    return ('end_line %d is past the end of %s (%d lines)'):format(e, t.name, n)
  end
end

-- ---------------------------------------------------------------------------------------------
-- Windows

---@param win integer
---@return boolean
local function is_sightline(win)
  if vim.w[win].sightline_role ~= nil then
    return true
  end
  local buf = api.nvim_win_get_buf(win)
  return vim.b[buf].sightline_role ~= nil or vim.bo[buf].filetype:match('^sightline') ~= nil
end

---@param win integer
---@return boolean
local function is_normal(win)
  return win ~= 0
    and api.nvim_win_is_valid(win)
    and api.nvim_win_get_config(win).relative == ''
    and not is_sightline(win)
end

--- The editor window: the most recently used normal window of the current tab that is not a
--- sightline pane, dialog or float.
---@return integer
function M.editor_window()
  local cur = api.nvim_get_current_win()
  if is_normal(cur) then
    return cur
  end
  local prev = vim.fn.win_getid(vim.fn.winnr('#'))
  if is_normal(prev) then
    return prev
  end
  local best, area = nil, -1
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if is_normal(w) and api.nvim_win_get_width(w) * api.nvim_win_get_height(w) > area then
      best, area = w, api.nvim_win_get_width(w) * api.nvim_win_get_height(w)
    end
  end
  return best or cur
end

--- Windows of the current tab showing buf that may be scrolled: current first, then the
--- editor window, then the rest; never floats or sightline's own windows.
---@param buf integer
---@return integer[]
local function candidate_windows(buf)
  local cur, ed = api.nvim_get_current_win(), M.editor_window()
  local out = {}
  local function add(w)
    if api.nvim_win_get_buf(w) == buf and is_normal(w) and not vim.tbl_contains(out, w) then
      out[#out + 1] = w
    end
  end
  add(cur)
  add(ed)
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    add(w)
  end
  return out
end

---@return boolean
local function has_closed_fold(win, s, e)
  if not vim.wo[win].foldenable then
    return false
  end
  return api.nvim_win_call(win, function()
    for l = s, e do
      if vim.fn.foldclosed(l) ~= -1 then
        return true
      end
    end
    return false
  end)
end

---@return boolean
local function fully_visible(win, s, e)
  return s >= vim.fn.line('w0', win) and e <= vim.fn.line('w$', win) and not has_closed_fold(win, s, e)
end

---@return integer
local function text_height(win, a, b)
  return api.nvim_win_text_height(win, { start_row = a - 1, end_row = b - 1 }).all
end

--- Do lines a..b fit in h screen rows of win? Measured in chunks of h lines, so a far range
--- costs O(h), not O(b - a) (closed folds may still make many lines fit).
---@return boolean
local function fits(win, a, b, h)
  local rows = 0
  while a <= b do
    local to = math.min(b, a + h)
    rows = rows + text_height(win, a, to)
    if rows > h then
      return false
    end
    a = to + 1
  end
  return true
end

--- Scroll win so s..e is in view and the cursor stays where it is (also in view, honouring
--- 'scrolloff'). Verified afterwards, since Neovim moves the view back to the cursor when
--- it would leave it; on failure the view is restored. Returns whether it worked.
---@return boolean
local function try_scroll(win, s, e)
  local h = vim.fn.getwininfo(win)[1].height
  if e - s + 1 > h or has_closed_fold(win, s, e) then
    return false
  end
  local buf = api.nvim_win_get_buf(win)
  local cursor = api.nvim_win_get_cursor(win)
  local c, n = cursor[1], api.nvim_buf_line_count(buf)
  local so = vim.wo[win].scrolloff
  so = math.min(so >= 0 and so or vim.o.scrolloff, math.floor((h - 1) / 2))
  local lo, hi = math.max(1, math.min(s, c - so)), math.min(n, math.max(e, c + so))
  if not fits(win, lo, hi, h) then
    return false
  end
  -- Centre the range where the cursor allows it: context around it reads better. The
  -- smallest usable topline is found by bisection (text height shrinks as the topline
  -- grows); the centred one is never above s - h, so neither is the search.
  local ideal = math.max(1, s - math.floor((h - text_height(win, s, e)) / 2))
  local a, b = math.min(ideal, lo), lo
  while a < b do
    local mid = math.floor((a + b) / 2)
    if text_height(win, mid, hi) <= h then
      b = mid
    else
      a = mid + 1
    end
  end
  local top = math.max(a, math.min(ideal, lo))
  local saved = api.nvim_win_call(win, vim.fn.winsaveview)
  api.nvim_win_call(win, function()
    vim.fn.winrestview({ topline = top, topfill = 0 })
  end)
  local after = api.nvim_win_get_cursor(win)
  if after[1] == cursor[1] and after[2] == cursor[2] and fully_visible(win, s, e) then
    local w0, wend = vim.fn.line('w0', win), vim.fn.line('w$', win)
    if c >= w0 and c <= wend then
      return true
    end
  end
  api.nvim_win_call(win, function()
    vim.fn.winrestview({ topline = saved.topline, topfill = saved.topfill, leftcol = saved.leftcol, skipcol = saved.skipcol })
  end)
  return false
end

--- `reveal.open = "window"`: show the buffer in the editor window (no jump, no alternate
--- file) with its cursor on the range. Refused (→ peek) where it would end the user's
--- visual or insert mode, or leave a buffer that cannot be hidden.
---@return integer? win
local function show_in_editor(buf, s)
  local ew = M.editor_window()
  if ew == api.nvim_get_current_win() and api.nvim_get_mode().mode ~= 'n' then
    return nil
  end
  local ok = pcall(api.nvim_win_call, ew, function()
    vim.cmd({ cmd = 'buffer', args = { tostring(buf) }, mods = { keepjumps = true, keepalt = true } })
    vim.fn.winrestview({ lnum = s, col = 0, curswant = 0 })
  end)
  return ok and api.nvim_win_get_buf(ew) == buf and ew or nil
end

-- ---------------------------------------------------------------------------------------------
-- The peek

---@param win integer
---@param tries integer?
local function close_win(win, tries)
  if not api.nvim_win_is_valid(win) then
    return
  end
  -- Closing fails in a few states (the command-line window, textlock): try again soon.
  if not pcall(api.nvim_win_close, win, true) and (tries or 0) < 600 then
    vim.defer_fn(function()
      close_win(win, (tries or 0) + 1)
    end, 100)
  end
end

local function close_peek()
  local p = peek
  peek = nil
  if p then
    pcall(api.nvim_del_augroup_by_id, p.group)
    close_win(p.win)
  end
end

--- Close the peek as soon as the user moves the cursor, changes mode or window. Events can be
--- stale (CursorMoved compares against the last *reported* position), so each one compares
--- the real state with a snapshot instead of trusting the event.
---@param p sightline.Peek
local function watch_peek(p)
  local win = api.nvim_get_current_win()
  local cur = api.nvim_win_get_cursor(win)
  local mode = api.nvim_get_mode().mode
  local function changed()
    if api.nvim_get_current_win() ~= win or api.nvim_get_mode().mode ~= mode then
      return true
    end
    local now = api.nvim_win_get_cursor(win)
    return now[1] ~= cur[1] or now[2] ~= cur[2]
  end
  api.nvim_create_autocmd({ 'CursorMoved', 'CursorMovedI', 'ModeChanged', 'WinEnter', 'BufEnter', 'TabEnter' }, {
    group = p.group,
    callback = function()
      if peek == p and changed() then
        -- Not inside the autocmd: closing windows there is not always allowed.
        vim.schedule(function()
          if peek == p then
            close_peek()
          end
        end)
        return true
      end
    end,
  })
  api.nvim_create_autocmd('WinClosed', {
    group = p.group,
    pattern = tostring(p.win),
    callback = function()
      if peek == p then
        peek = nil
        pcall(api.nvim_del_augroup_by_id, p.group)
      end
      return true
    end,
  })
end

---@return string|table
local function peek_border()
  local b = vim.o.winborder
  return (b ~= nil and b ~= '' and b ~= 'none') and b or 'rounded'
end

--- A non-focusable float on buf over the editor window, showing s..e (its start when taller
--- than the window), on the half of the window away from the user's cursor.
---@return integer win
local function open_peek(buf, s, e, title, with_signs)
  close_peek()
  local ew = M.editor_window()
  local info = vim.fn.getwininfo(ew)[1]
  local cfg = { focusable = false, noautocmd = true, border = peek_border(), zindex = 45, col = 0 }
  cfg.title = (' %s:%d–%d '):format(title, s, e)
  if info.height >= 3 then
    cfg.relative, cfg.win = 'win', ew
    cfg.width, cfg.height = math.max(1, info.width - 2), math.min(e - s + 1, info.height - 2)
    local cursor_row = api.nvim_win_call(ew, vim.fn.winline)
    cfg.row = cursor_row <= info.height / 2 and info.height - cfg.height - 2 or 0
  else
    cfg.relative, cfg.row = 'editor', 0
    cfg.width = math.max(1, vim.o.columns - 2)
    cfg.height = math.max(1, math.min(e - s + 1, vim.o.lines - vim.o.cmdheight - 3))
  end
  local win = api.nvim_open_win(buf, false, cfg)
  api.nvim_win_set_var(win, 'sightline_role', PEEK_ROLE)
  api.nvim_win_call(win, function()
    -- noautocmd: the user's OptionSet handlers have no business with a transient float.
    vim.cmd('noautocmd setlocal number norelativenumber nowrap nofoldenable nocursorline nolist winblend=0'
      .. ' scrolloff=0 sidescrolloff=0 foldcolumn=0 statuscolumn= winbar= winfixbuf signcolumn='
      .. (with_signs and 'yes:1' or 'no')
      .. ' winhighlight=NormalFloat:Normal,FloatBorder:SightlineRevealBar,FloatTitle:SightlineRevealBar')
    vim.fn.winrestview({ topline = s, lnum = s, col = 0, leftcol = 0 })
  end)
  peek = { win = win, buf = buf, group = api.nvim_create_augroup('sightline.reveal.peek', { clear = true }) }
  watch_peek(peek)
  return win
end

-- ---------------------------------------------------------------------------------------------
-- Painting and timing

--- The bar's sign may only show where it cannot open a sign column and shift the text: every
--- window showing buf already shows one ('yes', 'number' beside numbers, or 'auto'/'auto:1'
--- with signs present).
---@return boolean
local function signs_safe(buf)
  local has_signs
  for _, w in ipairs(vim.fn.win_findbuf(buf)) do
    if vim.w[w].sightline_role ~= PEEK_ROLE then
      local sc = vim.wo[w].signcolumn
      if sc == 'number' then
        if not (vim.wo[w].number or vim.wo[w].relativenumber) then
          return false
        end
      elseif sc == 'auto' or sc == 'auto:1' then
        if has_signs == nil then
          has_signs = #api.nvim_buf_get_extmarks(buf, -1, 0, -1, { type = 'sign', limit = 1 }) > 0
        end
        if not has_signs then
          return false
        end
      elseif not sc:match('^yes') then
        return false
      end
    end
  end
  return true
end

local function paint(buf, s, e, with_signs)
  -- The band covers whole lines, empty ones and past the end of line included.
  api.nvim_buf_set_extmark(buf, M.ns, s - 1, 0, {
    end_row = e,
    end_col = 0,
    hl_group = 'SightlineReveal',
    hl_eol = true,
  })
  -- One ranged extmark marks every line of the range: a single continuous bar.
  local bar = { end_row = e - 1, number_hl_group = 'SightlineRevealBar', priority = 4096 }
  if with_signs then
    bar.sign_text, bar.sign_hl_group = BAR_GLYPH, 'SightlineRevealBar'
  end
  api.nvim_buf_set_extmark(buf, M.ns, s - 1, 0, bar)
end

--- Remove the reveal in buf (or all of them): extmarks, timer and its peek.
---@param buf integer?
function M.clear(buf)
  if buf == nil then
    for b in pairs(active) do
      M.clear(b)
    end
    close_peek()
    return
  end
  local st = active[buf]
  active[buf] = nil
  if st and st.timer and not st.timer:is_closing() then
    st.timer:stop()
    st.timer:close()
  end
  if peek and peek.buf == buf then
    close_peek()
  end
  if api.nvim_buf_is_valid(buf) then
    pcall(api.nvim_buf_clear_namespace, buf, M.ns, 0, -1)
  end
end

local function arm_timer(buf, duration)
  generation = generation + 1
  local gen = generation
  local st = { gen = gen }
  active[buf] = st
  st.timer = vim.defer_fn(function()
    -- A newer reveal in this buffer owns the state now.
    if active[buf] and active[buf].gen == gen then
      pcall(M.clear, buf)
    end
  end, duration)
end

--- Show s..e of t.buf by one of the three cases and paint it.
---@param t sightline.Target
---@return string? note what could not be shown
local function show(t, s, e, duration)
  ensure_highlights()
  M.clear(t.buf)
  local case, win
  for _, w in ipairs(candidate_windows(t.buf)) do
    if fully_visible(w, s, e) then
      case, win = 'visible', w
      break
    end
  end
  if not case then
    for _, w in ipairs(candidate_windows(t.buf)) do
      if try_scroll(w, s, e) then
        case, win = 'scrolled', w
        break
      end
    end
  end
  if not case and config().open == 'window' and #candidate_windows(t.buf) == 0 then
    win = show_in_editor(t.buf, s)
    case = win and 'window' or nil
    if win then
      try_scroll(win, s, e) -- centre the range around the new cursor where it fits
    end
  end
  local with_signs, note = signs_safe(t.buf), nil
  if not case then
    local ok, res = pcall(open_peek, t.buf, s, e, t.name, with_signs)
    if ok then
      case, win = 'peek', res
    else -- e.g. E11 in the command-line window: paint anyway, say why nothing shows
      case, note = 'none', 'could not open a peek: ' .. tostring(res):gsub('^.-:%d+: ', ''):gsub('^Vim:', '')
    end
  end
  paint(t.buf, s, e, with_signs)
  arm_timer(t.buf, duration)
  M.last = { case = case, buf = t.buf, start_line = s, end_line = e, win = win }
  return note
end

-- ---------------------------------------------------------------------------------------------
-- Reveal

---@param opts sightline.RevealOpts
---@return string
local function reveal(opts)
  if type(opts) ~= 'table' then
    return 'reveal expects a table of arguments'
  end
  local o, err = check_reveal_args(strip_nil(opts))
  if not o then
    return err
  end
  local t
  t, err = target(o)
  if not t then
    return err
  end
  local s, e, note = o.start_line, o.end_line, nil
  if o.member_key or o.syntax_scope then
    local r, rerr, member = require('sightline.resolve').resolve(t.buf, {
      member_key = o.member_key,
      syntax_scope = o.syntax_scope,
      near_line = o.start_line,
      name = t.name,
    })
    if r then
      s, e = r.start_line, r.end_line
    elseif s and not check_range(t, s, e) then
      note = rerr -- the given lines are valid: show them
    elseif member then
      s, e, note = member.start_line, member.end_line, rerr -- else the member that did resolve
    else
      t.undo()
      local range_err = s and check_range(t, s, e)
      return range_err and (rerr .. '; ' .. range_err) or rerr
    end
  end
  err = check_range(t, s, e)
  if err then
    t.undo()
    return err
  end
  local shown = show(t, s, e, o.duration_ms)
  local notes = {}
  if note then
    notes[1] = ('%s; showed lines %d–%d'):format(note, s, e)
  end
  notes[#notes + 1] = shown
  return #notes > 0 and ('OK (%s)'):format(table.concat(notes, '; ')) or 'OK'
end

--- Show a range of a file to the user: scroll it into view (or peek) and highlight it for
--- duration_ms. Returns "OK", "OK (what could not be resolved)" or an error text; never throws.
---@param opts sightline.RevealOpts
---@return string
function M.reveal(opts)
  local ok, res = xpcall(reveal, debug.traceback, opts)
  if ok then
    return res
  end
  -- An internal failure: report its message, not a traceback.
  return 'reveal failed: ' .. (tostring(res):match('^[^\n]*') or '?'):gsub('^.-:%d+: ', '')
end

-- ---------------------------------------------------------------------------------------------
-- go_to_position: the opposite on purpose — moves the cursor and selects.

---@param line string
---@param col integer 1-based character column
---@return integer byte column, 0-based
local function byte_col(line, col)
  local b = vim.fn.byteidx(line, col - 1)
  return b >= 0 and b or #line
end

---@param o table
---@param t sightline.Target
---@return string?
local function check_position(o, t)
  local n = api.nvim_buf_line_count(t.buf)
  for _, k in ipairs({ 'line', 'end_line' }) do
    if o[k] and o[k] > n then
      return ('%s %d is past the end of %s (%d lines)'):format(k, o[k], t.name, n)
    end
  end
  for _, p in ipairs({ { 'column', 'line' }, { 'end_column', 'end_line' } }) do
    local col, row = o[p[1]], o[p[2]]
    if col and row then
      local text = api.nvim_buf_get_lines(t.buf, row - 1, row, true)[1]
      local chars = vim.fn.strchars(text)
      if col > math.max(chars, 1) then
        return ('%s %d is past the end of line %d of %s (%d characters)'):format(p[1], col, row, t.name, chars)
      end
    end
  end
end

---@param opts sightline.GotoOpts
---@return table?, string?
local function check_goto_args(opts)
  local o = { file_path = opts.file_path, buffer = opts.buffer }
  if o.file_path ~= nil and (type(o.file_path) ~= 'string' or o.file_path == '') then
    return nil, 'file_path must be a non-empty string'
  end
  if o.file_path == nil and type(o.buffer) ~= 'number' then
    return nil, 'file_path is required'
  end
  local err
  for _, k in ipairs({ 'line', 'column', 'end_line', 'end_column' }) do
    o[k], err = int_arg(opts[k], k)
    if err then
      return nil, err
    elseif o[k] and o[k] < 1 then
      return nil, ('%s must be at least 1, got %d'):format(k, o[k])
    end
  end
  if not o.line then
    return nil, 'line is required'
  end
  if o.end_column and not o.end_line then
    o.end_line = o.line
  end
  if o.end_line and o.end_line < o.line then
    return nil, ('end_line %d is before line %d'):format(o.end_line, o.line)
  end
  if o.end_line == o.line and o.end_column and o.end_column < (o.column or 1) then
    return nil, ('end_column %d is before column %d'):format(o.end_column, o.column or 1)
  end
  return o
end

--- Open buf in the editor window, move the cursor and select (charwise with an end column,
--- linewise with only an end line). Runs in Normal mode.
local function navigate(o, buf)
  local ew = M.editor_window()
  api.nvim_set_current_win(ew)
  if api.nvim_win_get_buf(ew) ~= buf then
    vim.cmd.buffer(buf) -- records a jump, so <C-o> returns
  else
    vim.cmd("normal! m'")
  end
  vim.bo[buf].buflisted = true
  local function pos(row, col)
    return { row, byte_col(api.nvim_buf_get_lines(buf, row - 1, row, true)[1], col or 1) }
  end
  api.nvim_win_set_cursor(ew, pos(o.line, o.column))
  if o.end_line then
    vim.cmd('normal! ' .. (o.end_column and 'v' or 'V'))
    api.nvim_win_set_cursor(ew, pos(o.end_line, o.end_column))
  end
  vim.cmd('normal! zv')
end

---@param opts sightline.GotoOpts
---@return string
local function go_to_position(opts)
  if type(opts) ~= 'table' then
    return 'go_to_position expects a table of arguments'
  end
  local o, err = check_goto_args(strip_nil(opts))
  if not o then
    return err
  end
  local t
  t, err = target(o)
  if not t then
    return err
  end
  err = check_position(o, t)
  if err then
    t.undo()
    return err
  end
  local mode = api.nvim_get_mode().mode
  if mode:match('^[cr]') then
    return 'Neovim is waiting in the command line or a prompt; try again when it is in Normal mode'
  end
  if mode:match('^[iRt]') then
    -- :stopinsert acts when Insert mode next gets control (and moves the cursor left like
    -- <Esc>), so navigate once the mode has actually changed.
    local done = false
    local function run()
      if not done then
        done = true
        pcall(navigate, o, t.buf)
      end
    end
    api.nvim_create_autocmd('ModeChanged', { once = true, callback = vim.schedule_wrap(run) })
    vim.defer_fn(run, 500)
    vim.cmd('stopinsert')
    return 'OK'
  end
  if mode ~= 'n' then
    vim.cmd('normal! \27') -- leave Visual/Select mode first
  end
  navigate(o, t.buf)
  return 'OK'
end

--- Open a file in the editor window, move the cursor to line/column and, with an end,
--- select up to end_line/end_column. Returns "OK" or an error text; never throws.
---@param opts sightline.GotoOpts
---@return string
function M.go_to_position(opts)
  local ok, res = xpcall(go_to_position, debug.traceback, opts)
  if ok then
    return res
  end
  return 'go_to_position failed: ' .. (tostring(res):match('^[^\n]*') or '?'):gsub('^.-:%d+: ', '')
end

-- ---------------------------------------------------------------------------------------------
-- :Sightline reveal

local USAGE = 'usage: :Sightline reveal {file} {start_line} [{end_line}] | :Sightline reveal {file} --member {key}'

--- Parse `:Sightline reveal {file} {start_line} [{end_line}]` or `{file} --member {key}`
--- (also `--duration {ms}`). fargs may include the leading "reveal".
---@param fargs string[]
---@return boolean ok, string message
function M.command(fargs)
  local args = vim.list_slice(fargs or {}, 1)
  if args[1] == 'reveal' then
    table.remove(args, 1)
  end
  local opts, pos = {}, {}
  local i = 1
  while i <= #args do
    local a = args[i]
    local flag, value = a:match('^%-%-(%a+)=(.*)$')
    if not flag and a:match('^%-%-%a+$') then
      flag, value, i = a:sub(3), args[i + 1], i + 1
    end
    if flag == 'member' then
      opts.member_key = value
    elseif flag == 'duration' then
      opts.duration_ms = value
    elseif flag then
      return false, ('unknown option --%s; %s'):format(flag, USAGE)
    else
      pos[#pos + 1] = a
    end
    if flag and (value == nil or value == '') then
      return false, ('--%s needs a value; %s'):format(flag, USAGE)
    end
    i = i + 1
  end
  if #pos == 0 or #pos > 3 or (#pos == 1 and not opts.member_key) then
    return false, USAGE
  end
  opts.file_path, opts.start_line, opts.end_line = pos[1], pos[2], pos[3]
  local res = M.reveal(opts)
  return res:sub(1, 2) == 'OK', res
end

--- Completion for `:Sightline reveal …`: files first, then `--member`/`--duration`.
---@param arglead string
---@param cmdline string
---@return string[]
function M.complete(arglead, cmdline)
  local before = cmdline:sub(1, #cmdline - #arglead)
  local words = {}
  for w in before:gsub('\\ ', '\1'):gmatch('%S+') do
    words[#words + 1] = w
  end
  local at
  for k, w in ipairs(words) do
    if w == 'reveal' then
      at = k
      break
    end
  end
  local n = at and (#words - at) or 0
  if n == 0 then
    return vim.tbl_map(function(f)
      return (f:gsub(' ', '\\ '))
    end, vim.fn.getcompletion(arglead, 'file'))
  end
  if words[#words] == '--member' or words[#words] == '--duration' then
    return {}
  end
  if arglead:sub(1, 1) == '-' or (n >= 1 and arglead == '') then
    return vim.tbl_filter(function(f)
      return vim.startswith(f, arglead)
    end, { '--member', '--duration' })
  end
  return {}
end

return M

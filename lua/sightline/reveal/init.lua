--- Reveal: show the user a range of code with a transient highlight, never moving a cursor,
--- the selection or the mode; and go_to_position, its deliberate opposite (moves and selects).
---
--- Vim keeps a window's cursor inside its view, so a reveal paints in place when the range is
--- visible, scrolls a window whose cursor can stay in view, and otherwise opens a *peek*: a
--- non-focusable float on the same buffer that closes with the highlight.
---
--- This module is the public API; the work is done beside it: args (checks, error texts),
--- target (the buffer), view (visible / scrolled / window), peek, paint (marks and timers),
--- colors, go_to, command (`:Sightline reveal`).
local args = require('sightline.reveal.args')
local colors = require('sightline.reveal.colors')
local paint = require('sightline.reveal.paint')
local peek = require('sightline.reveal.peek')
local target = require('sightline.reveal.target')
local view = require('sightline.reveal.view')
local windows = require('sightline.reveal.windows')

local M = {}

M.ns = paint.ns

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

--- What the last reveal did, for tests and `:checkhealth`: case is visible|scrolled|window|peek.
---@type {case: string, buf: integer, start_line: integer, end_line: integer, win: integer?}?
M.last = nil

--- Define SightlineReveal (the band) and SightlineRevealBar (the bar) as `default` groups.
--- Called at load and on ColorScheme by the plugin, and lazily before the first paint.
function M.setup_highlights()
  colors.setup()
end

--- The editor window: the most recently used normal window of the current tab that is not a
--- sightline pane, dialog or float.
---@return integer
function M.editor_window()
  return windows.editor_window()
end

--- Remove the reveal in buf (or all of them): extmarks, timer and its peek.
---@param buf integer?
function M.clear(buf)
  paint.clear(buf)
end

---@class sightline.RevealCtx internal: what the core adds to an agent's call
---@field secrets? string[] keys the core registered; a buffer holding one is never shown

--- The start both entry points share: a table, msgpack nils dropped, checked, its buffer,
--- refused when it holds a key (both show the buffer itself).
---@param what string the entry point, for the error text
---@param check fun(opts: table): table?, string?
---@param ctx sightline.RevealCtx?
---@return table? o, sightline.Target? t, string? err
local function prepare(what, opts, check, ctx)
  if type(opts) ~= 'table' then
    return nil, nil, what .. ' expects a table of arguments'
  end
  local o, err = check(args.strip_nil(opts))
  if not o then
    return nil, nil, err
  end
  local t
  t, err = target.find(o)
  if not t then
    return nil, nil, err
  end
  local row = require('sightline.reveal.secret').line_with_secret(t.buf, type(ctx) == 'table' and ctx.secrets or nil)
  if row then
    t.undo()
    return nil, nil, ('refused: line %d of %s holds an API key, and sightline never shows it'):format(row, t.name)
  end
  return o, t
end

---@param t sightline.Target
---@return string?
local function check_range(t, s, e)
  return args.check_lines(t, { { 'start_line', s }, { 'end_line', e } })
end

--- Show s..e of t.buf by one of the three cases and paint it.
---@param t sightline.Target
---@return string? note what could not be shown
local function show(t, s, e, duration)
  colors.ensure()
  paint.clear(t.buf)
  local case, win = view.place(t.buf, s, e)
  -- After placing: showing the buffer in the editor window changes which windows show it.
  local with_signs, note = paint.signs_safe(t.buf), nil
  if not case then
    local ok, res = pcall(peek.open, t.buf, s, e, t.name, with_signs)
    if ok then
      case, win = 'peek', res
    else -- e.g. E11 in the command-line window: paint anyway, say why nothing shows
      case, note = 'none', 'could not open a peek: ' .. tostring(res):gsub('^.-:%d+: ', ''):gsub('^Vim:', '')
    end
  end
  paint.paint(t.buf, s, e, with_signs)
  paint.arm_timer(t.buf, duration)
  M.last = { case = case, buf = t.buf, start_line = s, end_line = e, win = win }
  return note
end

---@param opts sightline.RevealOpts
---@param ctx sightline.RevealCtx?
---@return string
local function reveal(opts, ctx)
  local o, t, err = prepare('reveal', opts, args.check_reveal, ctx)
  if not o or not t then
    return err
  end
  local s, e, note = o.start_line, o.end_line, nil
  if o.member_key or o.syntax_scope then
    local r, rerr, member = require('sightline.resolve').resolve(t.buf, {
      member_key = o.member_key,
      syntax_scope = o.syntax_scope,
      near_line = o.start_line,
      name = t.name,
      python = ctx and ctx.python,
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

---@param opts sightline.GotoOpts
---@param ctx sightline.RevealCtx?
---@return string
local function go_to_position(opts, ctx)
  local o, t, err = prepare('go_to_position', opts, args.check_goto, ctx)
  if not o or not t then
    return err
  end
  return require('sightline.reveal.go_to').go(o, t)
end

--- fn made safe for the agent: an internal failure becomes "<what> failed: <message>", with
--- its first line and no traceback.
---@param what string
---@param fn fun(opts: table, ctx: table?): string
---@return fun(opts: table, ctx: table?): string
local function never_throws(what, fn)
  return function(opts, ctx)
    local ok, res = xpcall(fn, debug.traceback, opts, ctx)
    if ok then
      return res
    end
    return what .. ' failed: ' .. (tostring(res):match('^[^\n]*') or '?'):gsub('^.-:%d+: ', '')
  end
end

--- Show a range of a file to the user: scroll it into view (or peek) and highlight it for
--- duration_ms. Returns "OK", "OK (what could not be resolved)" or an error text; never throws.
---@type fun(opts: sightline.RevealOpts, ctx: sightline.RevealCtx?): string
M.reveal = never_throws('reveal', reveal)

--- Open a file in the editor window, move the cursor to line/column and, with an end,
--- select up to end_line/end_column. Returns "OK" or an error text; never throws.
---@type fun(opts: sightline.GotoOpts, ctx: sightline.RevealCtx?): string
M.go_to_position = never_throws('go_to_position', go_to_position)

--- Reveal a transcript chip by its attachment_id, as <CR> on it does: `select = true`
--- selects like <S-CR>; without it `attachments.navigate` decides. Returns "OK…" or an
--- error text; never throws. The ids live in the chips module (id → target), so the MCP
--- server, which has no core, resolves them in Neovim too.
---@type fun(opts: {attachment_id: string, select?: boolean}, ctx: sightline.RevealCtx?): string
M.reveal_attachment = never_throws('reveal_attachment', function(opts, ctx)
  return require('sightline.ui.chips').reveal_by_id(opts, ctx)
end)

--- `:Sightline reveal {file} {start_line} [{end_line}]` or `{file} --member {key}` (also
--- `--duration {ms}`). fargs may include the leading "reveal".
---@param fargs string[]
---@return boolean ok, string message
function M.command(fargs)
  return require('sightline.reveal.command').run(fargs)
end

--- Completion for `:Sightline reveal …`: files first, then `--member`/`--duration`.
---@param arglead string
---@param cmdline string
---@return string[]
function M.complete(arglead, cmdline)
  return require('sightline.reveal.command').complete(arglead, cmdline)
end

return M

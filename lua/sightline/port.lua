---@mod sightline.port  The only Lua the core calls: everything the core can do to Neovim.
---Mechanism only. Functions return data and short codes (`missing`, `stale`, `gone`, …) that the
---core (python/sightline/editor/port.py mirrors this module method for method) words into its
---messages. Text crosses in three places only, each worded here because a path with no core
---shows it too: the view functions answer as the public `reveal()` does ('OK…' or what is
---wrong, also what `:Sightline reveal` prints); a range check's `error` is port/scope.lua's, the
---words of the Lua API's own range check; and a `detail` or an apply's `error` says why the
---buffer or Neovim refused (port/buffers.lua, port/apply.lua, a failed :write), which the core
---puts after its own words.
---Nothing here calls the core back. One function per port method, grouped by topic and
---alphabetical inside a group.
local M = {}
local api = vim.api

---@alias sightline.PortTarget string|integer an absolute path (symlinks resolved) or a buffer

---A loaded buffer, up to date with its file (port/buffers.lua: every read goes through it).
---@param target sightline.PortTarget
---@return integer? buf a loaded buffer, or nil
---@return sightline.Disk? disk its file changed on disk and it was kept (unsaved changes)
local function loaded(target)
  return require('sightline.port.buffers').fresh(target)
end

-- Calls -------------------------------------------------------------------------------------

---Run port function `name` unless `deadline` (seconds since the epoch) has passed: a call
---that waited in Neovim's queue past its caller's timeout must never act later.
---@param deadline number?
---@param name string
---@param ... any the port function's arguments
---@return any
function M.call(deadline, name, ...)
  if type(deadline) == 'number' then
    local s, us = vim.uv.gettimeofday()
    if s + us / 1e6 > deadline then
      return 'sightline:expired-call'
    end
  end
  if name == 'call' or type(M[name]) ~= 'function' then
    return 'sightline:no-such-port-function'
  end
  return M[name](...)
end

-- Buffers: read -----------------------------------------------------------------------------

---The buffer of `path` for an agent edit, loaded hidden if needed and up to date with its
---file, or why there is none.
---@param path string
---@return integer? buf
---@return table? refused {missing} | {error = 'load_failed'|'unchangeable', detail}
---@return sightline.Disk? disk
local function editable(path)
  local buffers = require('sightline.port.buffers')
  if not buffers.find(path) and vim.fn.filereadable(path) == 0 then
    return nil, { missing = true }
  end
  local buf, err, disk = buffers.load(path)
  if not buf then
    return nil, { error = 'load_failed', detail = tostring(err) }
  end
  local why = buffers.unchangeable(buf)
  if why then
    return nil, { error = 'unchangeable', detail = why }
  end
  return buf, nil, disk
end

---A proposal's surroundings: `needle`'s occurrences in the buffer of `path` (loaded hidden if
---needed) and, when it occurs once, the lines it spans with `context` lines around them.
---@param path string
---@param needle string
---@param context integer
---`disk` (with a count) when the file changed on disk and the buffer was kept.
---@return table # {missing} | {error} | {count, disk?} | {count=1, buffer, first_line, lines, modified, disk?}
function M.find_unique(path, needle, context)
  local buf, refused, disk = editable(path)
  if not buf then
    return refused
  end
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  local unique = require('sightline.port.unique')
  local count, row, col, bad = unique.find(lines, needle)
  if bad then
    return { error = bad }
  end
  if count ~= 1 or not row or not col then
    return { count = count, disk = disk }
  end
  local end_row = unique.end_of(row, col, needle)
  local first = math.max(0, row - context)
  local last = math.min(#lines, end_row + 1 + context)
  return {
    count = 1,
    buffer = buf,
    first_line = first,
    lines = { unpack(lines, first + 1, last) },
    modified = vim.bo[buf].modified,
    disk = disk,
  }
end

---The whole buffer of `path` (loaded hidden if needed) for a write of the whole file (an ACP
---agent's): {buffer, lines, modified, disk?}, or {missing} | {error, detail} as find_unique says.
---@param path string
---@return table
function M.load_lines(path)
  local buf, refused, disk = editable(path)
  if not buf then
    return refused
  end
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  return { buffer = buf, lines = lines, modified = vim.bo[buf].modified, disk = disk }
end

---Lines [first, last) of a loaded buffer (at most `max`), or nil when none is loaded.
---@param target sightline.PortTarget
---@param first integer 0-based
---@param last integer exclusive, -1 for the end
---@param max integer
---@return {total: integer, lines: string[], modified: boolean, disk: sightline.Disk?}?
function M.read_lines(target, first, last, max)
  local buf, disk = loaded(target)
  if not buf then
    return nil
  end
  local total = api.nvim_buf_line_count(buf)
  if last < 0 or last > total then
    last = total
  end
  first = math.min(first, total)
  last = math.max(first, math.min(last, first + max))
  local lines = api.nvim_buf_get_lines(buf, first, last, false)
  return { total = total, lines = lines, modified = vim.bo[buf].modified, disk = disk }
end

---Whole lines, up to `max` bytes, of a buffer as text.
---@param buf integer loaded
---@param max integer
---@return string
local function text_of(buf, max)
  local out, size, row, count = {}, 0, 0, api.nvim_buf_line_count(buf)
  while row < count and size <= max do
    for _, line in ipairs(api.nvim_buf_get_lines(buf, row, math.min(row + 256, count), false)) do
      out[#out + 1] = line
      size = size + #line + 1
      if size > max then
        break
      end
    end
    row = row + 256
  end
  return table.concat(out, '\n') .. '\n'
end

---A checkpoint's view of `path`: whether a buffer of it is loaded (brought up to date with its
---file first) and, when that holds unsaved changes, its whole lines up to `max` bytes; else
---the file on disk is its state and no text crosses.
---@param path string
---@param max integer
---@return {loaded: boolean, modified: boolean?, text: string?, disk: sightline.Disk?}
function M.file_state(path, max)
  local buf, disk = loaded(path)
  if not buf then
    return { loaded = false }
  end
  if not vim.bo[buf].modified then
    return { loaded = true, modified = false, disk = disk }
  end
  return { loaded = true, modified = true, text = text_of(buf, max), disk = disk }
end

---Whole lines, up to `max` bytes, of the loaded buffer of `path` as text, or nil.
---@param path string
---@param max integer
---@return {text: string, disk: sightline.Disk?}?
function M.read_text(path, max)
  local buf, disk = loaded(path)
  if not buf then
    return nil
  end
  return { text = text_of(buf, max), disk = disk }
end

---Before the core deletes `path` (a rewind undoing the turn that created it): wipe its loaded
---buffer, unless it holds unsaved changes (then false: the core keeps the file too).
---@param path string absolute
---@return boolean
function M.drop_buffer(path)
  local buf = type(path) == 'string' and require('sightline.port.buffers').find(path) or nil
  if not buf or not api.nvim_buf_is_valid(buf) then
    return true
  end
  if api.nvim_buf_is_loaded(buf) and vim.bo[buf].modified then
    return false
  end
  return pcall(api.nvim_buf_delete, buf, { force = true })
end

---Files the core saw change on disk by their content (an ACP agent wrote them itself): their
---loaded buffers are brought up to date as before every read, even where the file's stat
---hides the change (a same-size write with its mtime put back). The paths whose buffer was
---kept (unsaved changes, or a file now deleted) are returned with why.
---@param paths string[] absolute, symlinks resolved
---@return {path: string, disk: sightline.Disk}[]
function M.sync_files(paths)
  local buffers, kept = require('sightline.port.buffers'), {}
  for _, path in ipairs(type(paths) == 'table' and paths or {}) do
    local buf = type(path) == 'string' and buffers.find(path) or nil
    if buf and api.nvim_buf_is_loaded(buf) then
      local disk = buffers.sync(buf, true)
      if disk then
        kept[#kept + 1] = { path = path, disk = disk }
      end
    end
  end
  return kept
end

---Which version of the file a reveal of `path` would look at: its loaded buffer's
---changedtick, else the file's mtime and size; nil when there is none.
---@param path string absolute
---@return string?
local function version(path)
  local buf = require('sightline.port.buffers').find(path)
  buf = buf and api.nvim_buf_is_loaded(buf) and buf or nil
  if buf then
    return ('b%d:%d'):format(buf, api.nvim_buf_get_changedtick(buf))
  end
  local stat = vim.uv.fs_stat(path)
  return stat and ('f%d.%d:%d'):format(stat.mtime.sec, stat.mtime.nsec, stat.size) or nil
end

---@param file_path string
---@return string? path absolute, nil when it must not be opened or is not Python
local function python_path(file_path)
  local path = require('sightline.reveal.target').normalize(file_path)
  if require('sightline.port.buffers').unopenable(path) then
    return nil
  end
  local buf = require('sightline.port.buffers').find(path)
  if path:match('%.pyi?$') or (buf and vim.bo[buf].filetype == 'python') then
    return path
  end
  return nil
end

---The text a reveal of `file_path` would look at (its loaded buffer, else the file) and its
---version, for a caller that resolves Python members itself (and keeps the result for that
---version); nil when the file is not Python or cannot be read. Nothing is loaded.
---@param file_path string as reveal takes it (relative to the working directory, ~, file://)
---@param max integer bytes
---@return {text: string, version: string}?
function M.python_source(file_path, max)
  local path = python_path(file_path)
  if not path then
    return nil
  end
  local buf = loaded(path)
  local v = version(path)
  if buf then
    return { text = text_of(buf, max), version = v }
  end
  local fd = io.open(path, 'rb')
  if not fd then
    return nil
  end
  local text = fd:read(max) or ''
  fd:close()
  return { text = text, version = v }
end

-- Ranges (Change with Agent) ----------------------------------------------------------------

---Check a flat range and describe it: {range, text, name, title, path, filetype, buftype},
---or {error} (what is wrong with the range, as the request's param check words it).
---@param flat table
---@return table
function M.describe_range(flat)
  local info, err = require('sightline.port.scope').describe(flat)
  return info or { error = err }
end

---Re-anchor a selection (see scope.anchor) and return its surroundings: {range, first_line,
---lines, path} with `context` lines around it, or {error = 'gone'|'missing'|'ambiguous'}.
---@param flat sightline.Range
---@param text string
---@param context integer
---@return table
function M.reanchor_range(flat, text, context)
  if type(flat) == 'table' and type(flat.buffer) == 'number' and flat.buffer > 0 then
    loaded(flat.buffer) -- up to date with its file before the selection is looked for
  end
  local range, err = require('sightline.port.scope').anchor(flat, text)
  if not range then
    return { error = err }
  end
  local buf = range.buffer
  local first = math.max(0, range.start_row - context)
  local last = math.min(api.nvim_buf_line_count(buf), range.end_row + 1 + context)
  return {
    range = range,
    first_line = first,
    lines = api.nvim_buf_get_lines(buf, first, last, true),
    path = api.nvim_buf_get_name(buf),
  }
end

---Re-anchor and replace a selection as one undo step, then the save rule:
---{range, applied} or {error = 'gone'|'missing'|'ambiguous'|'unchangeable', detail?}.
---@param flat sightline.Range
---@param old_text string
---@param new_text string
---@return table
function M.replace_range(flat, old_text, new_text)
  local res, err, detail = require('sightline.port.scope').replace(flat, old_text, new_text)
  return res or { error = err, detail = detail }
end

-- Buffers: write ----------------------------------------------------------------------------

---Apply an accepted edit: its anchor must occur exactly once ({stale, count} otherwise); one
---ranged edit after an undo break, then the save rule (review.apply).
---@param spec sightline.EditSpec
---@return sightline.Applied
function M.apply_edit(spec)
  return require('sightline.port.apply').apply(spec)
end

---Create a new file's buffer with `text` and write it (review.create).
---@param spec {path: string, text: string}
---@return sightline.Applied
function M.create_file(spec)
  return require('sightline.port.apply').create(spec)
end

-- The compare view --------------------------------------------------------------------------

---Close the compare view of proposal `id` (a rejected proposal).
---@param id integer
function M.close_compare(id)
  require('sightline.ui.compare').close_compare(id)
end

---The compare view's after side (the user may have edited it), closing the view; nil when
---it is not open.
---@param id integer
---@return string[]?
function M.take_after(id)
  return require('sightline.ui.compare').take_after(id)
end

-- Diagnostics -----------------------------------------------------------------------------

local MAX_ITEMS = 1000 -- far above what the core shows; keeps one answer small

---Diagnostics of loaded buffers under `root`, or of the buffer of `path` alone, worst first
---(all errors of every buffer before any warning, …) and only then cut to MAX_ITEMS, so no
---number of hints can hide an error.
---@param opts { root: string, path?: string }
---@return { loaded: boolean, items: table[], truncated: boolean }
function M.diagnostics(opts)
  local root = vim.fs.normalize(opts.root)
  local want = opts.path and vim.fs.normalize(opts.path) or nil
  local out = { loaded = false, items = {}, truncated = false }
  local matched = {} ---@type { buf: integer, name: string }[]
  for _, buf in ipairs(api.nvim_list_bufs()) do
    local name = api.nvim_buf_is_loaded(buf) and api.nvim_buf_get_name(buf) or ''
    if name ~= '' then
      name = vim.fs.normalize(vim.uv.fs_realpath(name) or name)
    end
    local match
    if want then
      match = name == want
    else
      match = name ~= '' and vim.startswith(name, root .. '/') and vim.bo[buf].buftype == ''
    end
    if match then
      out.loaded = true
      table.insert(matched, { buf = buf, name = name })
    end
  end
  local severity = vim.diagnostic.severity
  for _, level in ipairs({ severity.ERROR, severity.WARN, severity.INFO, severity.HINT }) do
    for _, m in ipairs(matched) do
      for _, d in ipairs(vim.diagnostic.get(m.buf, { severity = level })) do
        if #out.items >= MAX_ITEMS then
          out.truncated = true
          return out
        end
        table.insert(out.items, {
          path = m.name,
          lnum = d.lnum,
          col = d.col,
          end_lnum = d.end_lnum or d.lnum,
          severity = d.severity,
          message = d.message,
          source = d.source,
          code = d.code ~= nil and tostring(d.code) or nil,
        })
      end
    end
  end
  return out
end

-- Inline review -------------------------------------------------------------------------

---Draw an edit proposal's hunks in its buffer while it waits (sightline.ui.inline).
---@param spec sightline.HunkSpec
---@return boolean drawn
function M.show_hunks(spec)
  return require('sightline.ui.inline').show(spec)
end

---Remove the inline drawing of proposal `id` (decided, stopped, turn over).
---@param id integer
function M.clear_hunks(id)
  local inline = package.loaded['sightline.ui.inline']
  if inline then
    inline.clear(id)
  end
end

-- View and navigate -------------------------------------------------------------------------

---Move the cursor (and select) in the editor window; "OK…" or what is wrong.
---@param args sightline.GotoOpts
---@param keys string[] the core's known secrets: a buffer holding one is never shown
---@return string
function M.go_to_position(args, keys)
  return require('sightline.reveal').go_to_position(args, { secrets = keys })
end

---Reveal a range; `python` is the caller's own resolution of a Python member (the Lua side
---has no Python parser and never asks the core): {start_line, end_line} or {error, partial?},
---made from the source of `python.version` — 'sightline:python-stale' when the file is at
---another version now (the caller resolves again from python_source).
---@param args sightline.RevealOpts
---@param keys string[]
---@param python? table
---@return string
function M.reveal(args, keys, python)
  if type(python) == 'table' and python.version and type(args.file_path) == 'string' then
    local path = python_path(args.file_path)
    if not path or version(path) ~= python.version then
      return 'sightline:python-stale'
    end
  end
  return require('sightline.reveal').reveal(args, { secrets = keys, python = python })
end

---Reveal a transcript chip by its id, as a click on it does.
---@param args {attachment_id: string, select?: boolean}
---@param keys string[]
---@return string
function M.reveal_attachment(args, keys)
  return require('sightline.reveal').reveal_attachment(args, { secrets = keys })
end

-- The editor window -----------------------------------------------------------------------

---The text of the editor window's buffer (unsaved changes included), up to date with its
---file: whole lines up to `max` bytes, then one cut line, so `#text > max` says it went on.
---@param max integer
---@return { name: string, text: string, filetype: string, modified: boolean, disk: sightline.Disk? }?
function M.editor_buffer(max)
  local win = require('sightline.reveal.windows').find()
  if not win then
    return nil
  end
  local buf, disk = loaded(api.nvim_win_get_buf(win))
  if not buf then
    return nil
  end
  local name = api.nvim_buf_get_name(buf)
  if name ~= '' then
    name = vim.fs.normalize(vim.uv.fs_realpath(name) or name)
  end
  return {
    name = name,
    text = text_of(buf, max),
    filetype = vim.bo[buf].filetype,
    modified = vim.bo[buf].modified,
    disk = disk,
  }
end

---This Neovim's RPC address (v:servername), for an agent that attaches its own client.
---@return string
function M.servername()
  return vim.v.servername
end

-- The pane ----------------------------------------------------------------------------------

---Hand a UI update (status, transcript lines, events) to the UI's receiver.
---@param payload table
function M.notify_ui(payload)
  require('sightline.ui.receive').update(payload)
end

return M

---@mod sightline.port  The Lua the core calls, and nothing else calls the core from here.
---Data in, data out: no sentences, no decisions, never a call back into the core.
local M = {}

local MAX_ITEMS = 1000 -- far above what the core shows; keeps one answer small

---Diagnostics of loaded buffers under `root`, or of the buffer of `path` alone.
---@param opts { root: string, path?: string }
---@return { loaded: boolean, items: table[], truncated: boolean }
function M.diagnostics(opts)
  local root = vim.fs.normalize(opts.root)
  local want = opts.path and vim.fs.normalize(opts.path) or nil
  local out = { loaded = false, items = {}, truncated = false }
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_is_loaded(buf) and vim.api.nvim_buf_get_name(buf) or ''
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
      for _, d in ipairs(vim.diagnostic.get(buf)) do
        if #out.items >= MAX_ITEMS then
          out.truncated = true
          break
        end
        table.insert(out.items, {
          path = name,
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

---Draw an edit proposal's hunks in its buffer while it waits (sightline.inline).
---@param spec sightline.HunkSpec
---@return boolean drawn
function M.show_hunks(spec)
  return require('sightline.inline').show(spec)
end

---Remove the inline drawing of proposal `id` (decided, stopped, turn over).
---@param id integer
function M.clear_hunks(id)
  local inline = package.loaded['sightline.inline']
  if inline then
    inline.clear(id)
  end
end

---Whether `win` shows the user's editing: a normal window (not a float) of a normal buffer
---(not the pane's, a dialog's or another scratch buffer).
local function is_editor_win(win)
  if not win or win == 0 or not vim.api.nvim_win_is_valid(win) then
    return false
  end
  if vim.api.nvim_win_get_config(win).relative ~= '' then
    return false
  end
  local buf = vim.api.nvim_win_get_buf(win)
  return vim.bo[buf].buftype == '' and not vim.startswith(vim.api.nvim_buf_get_name(buf), 'sightline://')
end

---The editor window: the current window when it is one, else the previous one (`wincmd p`),
---else the window of the current tab whose buffer was used last.
---@return integer? win
function M.editor_win()
  local cur = vim.api.nvim_get_current_win()
  if is_editor_win(cur) then
    return cur
  end
  local prev = vim.fn.win_getid(vim.fn.winnr('#'))
  if is_editor_win(prev) then
    return prev
  end
  local best, used = nil, -1
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if is_editor_win(win) then
      local info = vim.fn.getbufinfo(vim.api.nvim_win_get_buf(win))[1]
      if info and info.lastused > used then
        best, used = win, info.lastused
      end
    end
  end
  return best
end

---The text of the editor window's buffer (unsaved changes included): whole lines up to
---`max` bytes, then one cut line, so `#text > max` says it went on.
---@param max integer
---@return { name: string, text: string, filetype: string, modified: boolean }?
function M.editor_buffer(max)
  local win = M.editor_win()
  if not win then
    return nil
  end
  local api = vim.api
  local buf = api.nvim_win_get_buf(win)
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
  local name = api.nvim_buf_get_name(buf)
  if name ~= '' then
    name = vim.fs.normalize(vim.uv.fs_realpath(name) or name)
  end
  return {
    name = name,
    text = #out > 0 and table.concat(out, '\n') .. '\n' or '',
    filetype = vim.bo[buf].filetype,
    modified = vim.bo[buf].modified,
  }
end

return M

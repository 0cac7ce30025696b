--- The buffer a reveal or go_to_position is about: found among the loaded ones (also through
--- a symlink) or loaded without being shown, and undone again when the arguments are wrong.
local api = vim.api

local M = {}

--- A reveal's file_path as an absolute path (file:// URIs, ~ and relative paths taken).
---@param path string
---@return string
function M.normalize(path)
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

--- Find or load the buffer for o.file_path (or o.buffer).
---@param o {file_path?: string, buffer?: integer}
---@return sightline.Target?, string?
function M.find(o)
  if o.file_path == nil then
    local buf = o.buffer == 0 and api.nvim_get_current_buf() or o.buffer
    if not api.nvim_buf_is_valid(buf) or not api.nvim_buf_is_loaded(buf) then
      return nil, ('buffer %d is not loaded'):format(o.buffer)
    end
    local name = api.nvim_buf_get_name(buf)
    return { buf = buf, name = name ~= '' and display_name(name) or ('buffer ' .. buf), undo = function() end }
  end
  local path = M.normalize(o.file_path)
  local name = display_name(path)
  -- Judged by path even when a buffer exists: an unloaded buffer of /dev/stdin or a FIFO
  -- would block Neovim for good when loaded, and a loaded /proc/self/environ shows secrets.
  local why = require('sightline.port.buffers').unopenable(path)
  if why then
    return nil, ('%s %s'):format(name, why)
  end
  local buf = find_buf(path)
  if buf and api.nvim_buf_is_loaded(buf) then
    return { buf = buf, name = name, undo = function() end }
  end
  if not buf and not vim.uv.fs_stat(path) then
    return nil, ('file not found: %s'):format(name)
  end
  local created = buf == nil
  -- Named as `:edit` of the relative path names it (':.'), not by its absolute path.
  buf = buf or vim.fn.bufadd(vim.fn.fnamemodify(path, ':.'))
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

return M

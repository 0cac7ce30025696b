---@mod sightline.port.buffers  Buffers by path, for the core's tools: find, load, judge.
---The core works on buffers, never around them: a file that is loaded is read and edited
---through its buffer, so the agent sees (and changes) what the user sees.
local M = {}
local api = vim.api

---The buffer (loaded or not) whose file is `path`, an absolute path with symlinks resolved.
---@param path string
---@return integer?
function M.find(path)
  for _, b in ipairs(api.nvim_list_bufs()) do
    local name = api.nvim_buf_get_name(b)
    if name ~= '' and (name == path or vim.fn.resolve(name) == path) then
      return b
    end
  end
  return nil
end

-- Kernel and device trees: reading them can block for good (a FIFO, /dev/stdin), show
-- another process's secrets (/proc/self/environ) or never end (/dev/zero).
local SYSTEM_TREES = { '/proc', '/sys', '/dev' }

---Why the file at `path` must not be opened for the agent, or nil when it may: only regular
---files outside /proc, /sys and /dev are (symlinks followed, so /dev/stdin and a link to a
---FIFO are caught). A missing file is not judged here.
---@param path string absolute
---@return string?
function M.unopenable(path)
  local real = vim.uv.fs_realpath(path) or path
  for _, p in ipairs({ path, real }) do
    for _, tree in ipairs(SYSTEM_TREES) do
      if p == tree or p:sub(1, #tree + 1) == tree .. '/' then
        return ('is under %s, which sightline never opens'):format(tree)
      end
    end
  end
  local stat = vim.uv.fs_stat(path)
  if stat and stat.type == 'directory' then
    return 'is a directory, not a file'
  elseif stat and stat.type ~= 'file' then
    return ('is not a regular file (%s)'):format(stat.type)
  end
  return nil
end

---Load the buffer of `path` for an edit (created unlisted: it becomes listed once edited).
---A file open in another Neovim loads read-only and never prompts: bufload() skips the
---SwapExists dialog (and the autocmd) and reports E325, which marks the buffer here.
---@param path string
---@return integer? buf, string? err
function M.load(path)
  local buf = M.find(path)
  if not (buf and api.nvim_buf_is_loaded(buf)) then
    local why = M.unopenable(path)
    if why then
      return nil, path .. ' ' .. why
    end
  end
  buf = buf or vim.fn.bufadd(path)
  if not api.nvim_buf_is_loaded(buf) then
    local ok, err = pcall(vim.fn.bufload, buf)
    if not ok and tostring(err):find('E325', 1, true) and api.nvim_buf_is_loaded(buf) then
      vim.b[buf].sightline_swap = true
      vim.bo[buf].readonly = true
    elseif not ok then
      return nil, tostring(err)
    end
  end
  return buf
end

---Why the buffer cannot take an edit, or nil when it can.
---@param buf integer
---@return string?
function M.unchangeable(buf)
  local bo = vim.bo[buf]
  if bo.buftype == 'terminal' then
    return 'is a terminal buffer'
  elseif bo.buftype == 'help' then
    return 'is a help buffer'
  elseif bo.buftype == 'quickfix' or bo.buftype == 'prompt' then
    return ('is a %s buffer'):format(bo.buftype)
  elseif vim.b[buf].sightline_swap then
    return 'is open in another Neovim (a swap file exists), so it was loaded read-only'
  elseif bo.readonly then
    return "is read-only ('readonly')"
  elseif not bo.modifiable then
    return "is not modifiable ('nomodifiable')"
  end
  return nil
end

---A file-backed buffer: a normal buffer whose file exists on disk. Only these are saved.
---@param buf integer
---@return boolean
function M.has_file(buf)
  local name = api.nvim_buf_get_name(buf)
  return vim.bo[buf].buftype == '' and name ~= '' and vim.fn.filereadable(name) == 1
end

return M

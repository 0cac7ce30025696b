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

-- Up to date with the file ---------------------------------------------------------------
-- The one rule of every read and write the core makes through a buffer: before it, Neovim's
-- view of the file is brought up to date. An unmodified buffer whose file changed is reloaded
-- as `:checktime` with 'autoread' reloads it (whatever 'autoread' says: a tool that reads the
-- file must see the file; nothing unsaved exists to lose, and undo keeps the old text); a
-- modified buffer is never touched, and the caller gets a code for the core to word.
--
-- `:checktime` alone is not enough: on Linux Neovim ignores an mtime exactly one second off
-- when the size is the same (a formatter run just after a save), so each buffer's file is
-- also stamped (inode, size, mtime to the nanosecond) whenever Neovim reads or writes it.

---@alias sightline.Disk 'conflict'|'deleted' the file changed on disk (or is gone) and the buffer was not reloaded: it has unsaved changes, or it is the only copy left

local stamps = {} ---@type table<integer, string> buffer → its file as Neovim last read or wrote it
local CONFLICT = '?' -- a stamp no file has: the buffer stays in conflict until read or written

---@param name string
---@return string?
local function stamp_of(name)
  local st = vim.uv.fs_stat(name)
  return st and ('%d:%d:%d.%d'):format(st.ino, st.size, st.mtime.sec, st.mtime.nsec) or nil
end

local group = api.nvim_create_augroup('sightline.port.buffers', { clear = true })
api.nvim_create_autocmd({ 'BufReadPost', 'BufWritePost' }, {
  group = group,
  desc = 'sightline: stamp the file a buffer was read from or written to',
  callback = function(ev)
    local name = api.nvim_buf_get_name(ev.buf)
    if name ~= '' and vim.fs.normalize(ev.match) == vim.fs.normalize(name) then -- not `:w other`
      stamps[ev.buf] = stamp_of(name)
    end
  end,
})
api.nvim_create_autocmd('BufUnload', {
  group = group,
  desc = 'sightline: forget the stamp of an unloaded buffer',
  callback = function(ev)
    stamps[ev.buf] = nil
  end,
})

---Neovim's own check, without its prompts: a FileChangedShell handler of ours stands in for
---the W11/W12 dialogs. An unmodified buffer is reloaded; a modified one is kept.
---@param buf integer
---@return string? reason v:fcs_reason when Neovim saw a change it did not reload
local function checktime(buf)
  local reason
  local au = api.nvim_create_autocmd('FileChangedShell', {
    group = group,
    buffer = buf,
    callback = function()
      reason = vim.v.fcs_reason
      local reload = reason ~= 'deleted' and reason ~= 'conflict' and not vim.bo[buf].modified
      vim.v.fcs_choice = reload and 'reload' or '' -- '': keep the buffer as it is
      if reload then
        reason = nil
      end
    end,
  })
  pcall(vim.cmd, 'silent checktime ' .. buf)
  pcall(api.nvim_del_autocmd, au)
  return reason
end

---Reload an unmodified buffer whose file changed although its mtime says otherwise: `:edit`
---of it, which keeps undo ('undoreload') and its windows' cursors, as :checktime's reload does.
---@param buf integer
local function reload(buf)
  local listed = vim.bo[buf].buflisted -- :edit lists the buffer; an agent's read never does
  pcall(api.nvim_buf_call, buf, function()
    vim.cmd('silent keepalt keepjumps edit')
  end)
  vim.bo[buf].buflisted = listed
end

---Bring a loaded buffer up to date with its file (the rule above). `changed`: the caller knows
---the file changed (by its content), whatever its stat says.
---@param buf integer
---@param changed? boolean
---@return sightline.Disk?
function M.sync(buf, changed)
  local name = api.nvim_buf_get_name(buf)
  if vim.bo[buf].buftype ~= '' or name == '' then
    return nil
  end
  local tick = api.nvim_buf_get_changedtick(buf)
  local reason = checktime(buf)
  local reloaded = api.nvim_buf_get_changedtick(buf) ~= tick
  local seen, now = stamps[buf], stamp_of(name)
  if reason == 'deleted' or (seen and not now) then
    stamps[buf] = seen or CONFLICT
    return 'deleted'
  elseif not now then
    return nil -- a new file not written yet
  elseif vim.bo[buf].modified then
    if reason or changed or (seen and seen ~= now) then
      stamps[buf] = CONFLICT -- said until the buffer is read or written again
      return 'conflict'
    end
    stamps[buf] = seen or now
    return nil
  end
  if not reloaded and (changed or (seen and seen ~= now)) then
    reload(buf)
  end
  stamps[buf] = stamp_of(name)
  return nil
end

---The loaded buffer of a path (or a buffer number), brought up to date with its file.
---@param target string|integer
---@return integer? buf, sightline.Disk? disk
function M.fresh(target)
  local buf = type(target) == 'number' and target or M.find(target --[[@as string]])
  if not (buf and api.nvim_buf_is_valid(buf) and api.nvim_buf_is_loaded(buf)) then
    return nil
  end
  return buf, M.sync(buf)
end

---Load the buffer of `path` for an edit (created unlisted: it becomes listed once edited),
---up to date with its file. A file open in another Neovim loads read-only and never
---prompts: bufload() skips the SwapExists dialog (and the autocmd) and reports E325, which
---marks the buffer here.
---@param path string
---@return integer? buf, string? err, sightline.Disk? disk
function M.load(path)
  local buf = M.find(path)
  if buf and api.nvim_buf_is_loaded(buf) then
    return buf, nil, M.sync(buf)
  end
  local why = M.unopenable(path)
  if why then
    return nil, path .. ' ' .. why
  end
  buf = buf or vim.fn.bufadd(path)
  local ok, err = pcall(vim.fn.bufload, buf)
  if not ok and tostring(err):find('E325', 1, true) and api.nvim_buf_is_loaded(buf) then
    vim.b[buf].sightline_swap = true
    vim.bo[buf].readonly = true
  elseif not ok then
    return nil, tostring(err)
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

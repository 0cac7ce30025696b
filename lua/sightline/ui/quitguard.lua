---@mod sightline.ui.quitguard  Quitting while an edit waits is refused, as Vim refuses to quit with unsaved changes.
---
--- A proposal that waits is work quitting would drop. Vim's rule for such work is the
--- unsaved buffer: `:q` in the last window, `:qa`, `:wqa` and `:xa` refuse with E37/E162
--- naming it, `:qa!` quits. So while an edit waits, a hidden `acwrite` buffer named after it
--- stays modified, and writing it says how to decide instead of writing (so `:wqa` refuses
--- too). Vim then shows the buffer it refused on in the current window: that window goes
--- back to what it showed. A command or a permission that waits drops nothing: no guard.
local M = {}
local api = vim.api

local S = {
  buf = nil, ---@type integer? the guard buffer
  what = nil, ---@type string? the summary it is named after
}

-- The kinds of waiting decision that hold work a quit would drop.
local GUARDED = { edit = true, create = true }

---@param what string the waiting proposal's summary
local function say(what)
  require('sightline.ui.message').notify(
    ('sightline: %s waits for your decision: :Sightline accept or :Sightline reject (:qa! quits and drops it)'):format(
      what
    ),
    vim.log.levels.WARN
  )
end

local function drop()
  local buf = S.buf
  S.buf, S.what = nil, nil
  if buf and api.nvim_buf_is_valid(buf) then
    vim.bo[buf].modified = false
    pcall(api.nvim_buf_delete, buf, { force = true })
  end
end

---@param what string
local function guard(what)
  if S.buf and api.nvim_buf_is_valid(S.buf) and S.what == what then
    return
  end
  drop() -- a new name: renaming would leave the old name behind as an alternate buffer
  local buf = api.nvim_create_buf(false, false)
  -- A URI-like name stays as written (a plain one would be made a path of the cwd).
  local ok = pcall(api.nvim_buf_set_name, buf, ('sightline://%s waits for your decision'):format(what))
  if not ok then
    pcall(api.nvim_buf_delete, buf, { force = true })
    return
  end
  vim.bo[buf].buftype = 'acwrite'
  vim.bo[buf].swapfile = false
  vim.bo[buf].modified = true
  api.nvim_create_autocmd('BufWriteCmd', {
    buffer = buf,
    callback = function()
      say(what) -- and stay modified: the write (and :wqa's quit) did not happen
    end,
    desc = 'sightline: a waiting edit is decided, not written',
  })
  api.nvim_create_autocmd('BufEnter', {
    buffer = buf,
    callback = function()
      local win = api.nvim_get_current_win()
      vim.schedule(function()
        if api.nvim_win_is_valid(win) and api.nvim_win_get_buf(win) == buf then
          api.nvim_win_call(win, function()
            if not pcall(vim.cmd, 'silent buffer #') then
              vim.cmd('silent enew')
            end
          end)
        end
      end)
    end,
    desc = 'sightline: the window goes back to what it showed',
  })
  S.buf, S.what = buf, what
end

---Follow the core's status: guard while an edit waits, never otherwise.
---@param status table the mirror of the core's status
function M.update(status)
  local waiting = status.state == 'awaiting_decision' and GUARDED[status.pending_kind] and status.pending
  if type(waiting) == 'string' and waiting ~= '' then
    guard(waiting)
  else
    drop()
  end
end

---The core is gone: nothing waits.
function M.clear()
  drop()
end

---The guard buffer, for tests.
---@return integer?
function M.buffer()
  return S.buf
end

return M

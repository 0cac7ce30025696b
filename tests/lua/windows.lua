-- Window and buffer readers: what the user could lose, the reveal peeks, one buffer's state.
-- Called in a child Neovim as lua_helper(nv, 'windows.<function>', ...) (tests/lua_helper.py).
local M = {}

-- Everything the user could lose: every window's cursor, view and jumplist, the mode, the
-- visual marks and the live selection, every buffer's changedtick. Sightline's peek excluded.
function M.snapshot()
  local api = vim.api
  local s = { mode = api.nvim_get_mode().mode, v = vim.fn.getpos('v'), wins = {}, bufs = {} }
  for _, w in ipairs(api.nvim_list_wins()) do
    if vim.w[w].sightline_role == nil then
      local info = vim.fn.getwininfo(w)[1]
      s.wins[tostring(w)] = {
        cursor = api.nvim_win_get_cursor(w),
        buf = api.nvim_win_get_buf(w),
        topline = info.topline,
        jumps = vim.fn.getjumplist(w),
      }
    end
  end
  for _, b in ipairs(api.nvim_list_bufs()) do
    s.bufs[tostring(b)] = {
      tick = api.nvim_buf_get_changedtick(b),
      lt = api.nvim_buf_get_mark(b, '<'),
      gt = api.nvim_buf_get_mark(b, '>'),
      listed = vim.bo[b].buflisted,
      loaded = api.nvim_buf_is_loaded(b),
    }
  end
  return s
end

function M.peeks()
  local out = {}
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.w[w].sightline_role == 'reveal_peek' then
      local c = vim.api.nvim_win_get_config(w)
      out[#out + 1] = {
        win = w,
        buf = vim.api.nvim_win_get_buf(w),
        config = c,
        topline = vim.fn.getwininfo(w)[1].topline,
        number = vim.wo[w].number,
        cursor = vim.api.nvim_win_get_cursor(w),
      }
    end
  end
  return out
end

function M.buffer_state(name)
  local api = vim.api
  local buf = vim.fn.bufnr(name)
  return {
    win = api.nvim_get_current_win(),
    mode = api.nvim_get_mode().mode,
    tick = api.nvim_buf_get_changedtick(buf),
    lines = api.nvim_buf_get_lines(buf, 0, -1, true),
  }
end

-- The pane's windows in the current tab by role (transcript, composer, …).
function M.pane_roles()
  local out = {}
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local role = vim.b[vim.api.nvim_win_get_buf(w)].sightline_role
    if role then
      out[role] = w
    end
  end
  return out
end

return M

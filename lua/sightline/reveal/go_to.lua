--- go_to_position: reveal's opposite on purpose. It opens the file in the editor window, moves
--- the cursor and selects, leaving Insert or Visual mode first.
local api = vim.api
local args = require('sightline.reveal.args')
local windows = require('sightline.reveal.windows')

local M = {}

---@param line string
---@param col integer 1-based character column
---@return integer byte column, 0-based
local function byte_col(line, col)
  local b = vim.fn.byteidx(line, col - 1)
  return b >= 0 and b or #line
end

--- Open buf in the editor window, move the cursor and select (charwise with an end column,
--- linewise with only an end line). Runs in Normal mode.
local function navigate(o, buf)
  local ew = windows.editor_window()
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

--- Go to the checked position o in t, in whatever mode Neovim is in.
---@param o table checked by args.check_goto
---@param t sightline.Target
---@return string "OK" or an error text
function M.go(o, t)
  local err = args.check_position(o, t)
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

return M

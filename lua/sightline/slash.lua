---@mod sightline.slash  A composer message that starts with `/`: the core says what it is
---(sightline.slash.run); this runs a built-in as its `:Sightline` subcommand, asks for a
---prompt's missing inputs with vim.ui.input, and shows the core's hint.
local M = {}
local api = vim.api

---What a prompt file may quote from the editor window: its file and its last visual selection.
---@return table params the flat range (when there is a selection) and `file`
local function editor_context()
  local out = {}
  local ok, win = pcall(function()
    return require('sightline.reveal').editor_window()
  end)
  if not ok or not api.nvim_win_is_valid(win) then
    return out
  end
  local buf = api.nvim_win_get_buf(win)
  local name = api.nvim_buf_get_name(buf)
  if name ~= '' and vim.bo[buf].buftype == '' then
    out.file = vim.fn.fnamemodify(name, ':.')
  end
  local range = require('sightline.ui.change').last_selection(buf)
  if range then
    out = vim.tbl_extend('force', out, range)
  end
  return out
end

---Ask for each missing input in turn; `done` gets them all, or nil when one was cancelled.
---@param asks {name: string, prompt: string}[]
---@param got table<string, string>
---@param done fun(inputs: table<string, string>?)
local function ask(asks, got, done)
  local first = asks[1]
  if not first then
    return done(got)
  end
  local label = first.prompt ~= '' and first.prompt ~= first.name and (' (' .. first.prompt .. ')') or ''
  vim.ui.input({ prompt = ('%s%s: '):format(first.name, label) }, function(value)
    if value == nil then
      return done(nil)
    end
    got[first.name] = value
    ask(vim.list_slice(asks, 2), got, done)
  end)
end

---Send `text` (it starts with `/`). `sent` runs once it was sent or run: the composer empties
---then. A refusal is said in the pane and the composer keeps the text.
---@param text string
---@param sent fun()
---@param inputs table<string, string>?
function M.submit(text, sent, inputs)
  local params = vim.tbl_extend('force', editor_context(), {
    text = text,
    workspace = vim.fn.getcwd(-1, -1),
    config_dir = vim.fn.stdpath('config'),
    inputs = inputs,
  })
  local notice = require('sightline.ui.pane.notice')
  local res, err = require('sightline.host').request('slash.run', params)
  if not res then
    notice.notice(err or 'sightline: the command failed')
    return
  end
  if res.command then
    -- The same path as typing `:Sightline {command} {args}`.
    local fargs = { res.command }
    vim.list_extend(fargs, res.args or {})
    if require('sightline.commands').run({ fargs = fargs, range = 0 }) then
      sent()
    end
    return
  end
  if res.ask then
    ask(res.ask, vim.deepcopy(inputs or {}), function(got)
      if got then
        M.submit(text, sent, got)
      end
    end)
    return
  end
  sent() -- (`pending`: an MCP prompt is fetched; a failure is said in the transcript)
  if res.hint then
    notice.notice('sightline: ' .. res.hint, vim.log.levels.INFO, { notify = false })
  end
end

return M

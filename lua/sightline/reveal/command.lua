--- `:Sightline reveal {file} {start_line} [{end_line}]`: parsing and completion.
local M = {}

local USAGE = 'usage: :Sightline reveal {file} {start_line} [{end_line}] | :Sightline reveal {file} --member {key}'

--- Parse `:Sightline reveal {file} {start_line} [{end_line}]` or `{file} --member {key}`
--- (also `--duration {ms}`) and reveal. fargs may include the leading "reveal".
---@param fargs string[]
---@return boolean ok, string message
function M.run(fargs)
  local args = vim.list_slice(fargs or {}, 1)
  if args[1] == 'reveal' then
    table.remove(args, 1)
  end
  local opts, pos = {}, {}
  local i = 1
  while i <= #args do
    local a = args[i]
    local flag, value = a:match('^%-%-(%a+)=(.*)$')
    if not flag and a:match('^%-%-%a+$') then
      flag, value, i = a:sub(3), args[i + 1], i + 1
    end
    if flag == 'member' then
      opts.member_key = value
    elseif flag == 'duration' then
      opts.duration_ms = value
    elseif flag then
      return false, ('unknown option --%s; %s'):format(flag, USAGE)
    else
      pos[#pos + 1] = a
    end
    if flag and (value == nil or value == '') then
      return false, ('--%s needs a value; %s'):format(flag, USAGE)
    end
    i = i + 1
  end
  if #pos == 0 or #pos > 3 or (#pos == 1 and not opts.member_key) then
    return false, USAGE
  end
  opts.file_path, opts.start_line, opts.end_line = pos[1], pos[2], pos[3]
  local res = require('sightline.reveal').reveal(opts)
  return res:sub(1, 2) == 'OK', res
end

--- Completion for `:Sightline reveal …`: files first, then `--member`/`--duration`.
---@param arglead string
---@param cmdline string
---@return string[]
function M.complete(arglead, cmdline)
  local before = cmdline:sub(1, #cmdline - #arglead)
  local words = {}
  for w in before:gsub('\\ ', '\1'):gmatch('%S+') do
    words[#words + 1] = w
  end
  local at
  for k, w in ipairs(words) do
    if w == 'reveal' then
      at = k
      break
    end
  end
  local n = at and (#words - at) or 0
  if n == 0 then
    return vim.tbl_map(function(f)
      return (f:gsub(' ', '\\ '))
    end, vim.fn.getcompletion(arglead, 'file'))
  end
  if words[#words] == '--member' or words[#words] == '--duration' then
    return {}
  end
  if arglead:sub(1, 1) == '-' or (n >= 1 and arglead == '') then
    return vim.tbl_filter(function(f)
      return vim.startswith(f, arglead)
    end, { '--member', '--duration' })
  end
  return {}
end

return M

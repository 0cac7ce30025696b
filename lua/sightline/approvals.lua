---@mod sightline.approvals  :Sightline approvals [revoke {n}]: the kept approvals of this workspace.
---The core keeps them and words the lines; this module parses the command line, completes
---the numbers and echoes the listing.
local M = {}

local function request(method, params)
  return require('sightline.host').workspace_request(method, params)
end

---The listing's lines, numbered as `revoke` takes them.
---@return string[]? lines, string? err
function M.list()
  local res, err = request('approvals.list')
  if not res then
    return nil, err
  end
  return res.lines
end

---@param args string[] the words after `approvals`
---@return boolean? ok, string? err
function M.command(args)
  if #args == 0 then
    local lines, err = M.list()
    if not lines then
      return nil, err
    end
    if #lines == 0 then
      lines = { 'No kept approvals here: gA / gc keep one when you allow a command (:help sightline-approvals)' }
    end
    vim.api.nvim_echo({ { table.concat(lines, '\n') } }, true, {})
    return true
  end
  if args[1] ~= 'revoke' or #args ~= 2 then
    return nil, 'sightline: usage: :Sightline approvals [revoke {n}]'
  end
  local n = tonumber(args[2])
  if not n or n ~= math.floor(n) or n < 1 or n > 2 ^ 31 then
    return nil,
      ('sightline: :Sightline approvals revoke takes a number from the list, got %q'):format(args[2]:sub(1, 40))
  end
  local res, err = request('approvals.revoke', { number = n })
  if not res then
    return nil, err
  end
  require('sightline.ui.message').notify(res.message, vim.log.levels.INFO)
  return true
end

---@param arglead string
---@param args string[] words after `approvals`, the one being typed last
---@return string[]
function M.complete(arglead, args)
  local out = {}
  if #args <= 1 then
    out = { 'revoke' }
  elseif #args == 2 and args[1] == 'revoke' then
    for n = 1, #(M.list() or {}) do
      out[#out + 1] = tostring(n)
    end
  end
  return require('sightline.commands').starting(out, arglead)
end

return M

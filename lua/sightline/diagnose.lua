---@mod sightline.diagnose  Why the core could not start, said as what to do about it.
---lazy.nvim with `dir =` skips a local plugin's `build`: the interpreter then lacks the
---core's packages and Python's own ImportError means nothing to the user.
local M = {}

---What installs the core's packages.
---@param root string the plugin directory
function M.install_advice(root)
  return ('run `make venv` in %s (or `:Lazy build sightline.nvim`)'):format(root)
end

---One message for the core's stderr when a known start-up failure is in it, else nil.
---@param lines string[] the core's last stderr lines
---@param python string the interpreter that ran the core
---@param root string the plugin directory
---@return string?
function M.from_stderr(lines, python, root)
  for _, line in ipairs(lines or {}) do
    local module = type(line) == 'string' and line:match("No module named '([%w_]+)")
    if module and module ~= 'sightline' then
      return (
        'sightline: the core cannot start: Python package %q is not installed for %s; %s, '
        .. 'or set the `python` option'
      ):format(module, python, M.install_advice(root))
    end
  end
end

-- The stderr tables (one per core run) whose explanation a refused request already gave.
local told = setmetatable({}, { __mode = 'k' })

---A request failed because the core died: the explanation, remembered for on_exit.
---@param lines string[] the core's last stderr lines
---@param python string the interpreter that ran the core
---@param root string the plugin's directory
---@return string?
function M.for_request(lines, python, root)
  local msg = M.from_stderr(lines, python, root)
  if msg then
    told[lines] = true
  end
  return msg
end

---The message for the core's exit: the explanation instead of the generic `msg`, or false
---when a refused request already gave it (the user sees it once).
---@param lines string[] the core's last stderr lines
---@param python string the interpreter that ran the core
---@param root string the plugin's directory
---@param msg string the generic exit message
---@return string|false
function M.for_exit(lines, python, root, msg)
  if told[lines] then
    return false
  end
  return M.from_stderr(lines, python, root) or msg
end

return M

--- Python buffers through the core's `ast`: Neovim ships no Python tree-sitter parser.
local api = vim.api

local M = {}

---@param opts sightline.ResolveOpts
---@return sightline.LineRange?, string?
local function request(buf, opts)
  local ok, host = pcall(require, 'sightline.host')
  if not ok or type(host) ~= 'table' or type(host.request) ~= 'function' then
    return nil, 'the Python resolver needs the sightline core, which is not available'
  end
  local params = {
    text = table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), '\n'),
    member_key = opts.member_key,
    syntax_scope = opts.syntax_scope,
    near_line = opts.near_line,
  }
  local ok2, res, err = pcall(host.request, 'resolve.python', params)
  if not ok2 then
    return nil, tostring(res)
  end
  if type(res) ~= 'table' or type(res.start_line) ~= 'number' or type(res.end_line) ~= 'number' then
    return nil, tostring(err or 'the Python resolver gave no range')
  end
  return { start_line = res.start_line, end_line = res.end_line }
end

---@param buf integer
---@return boolean
function M.is_python(buf)
  return vim.bo[buf].filetype == 'python' or api.nvim_buf_get_name(buf):match('%.pyi?$') ~= nil
end

--- Like resolve.resolve, for a Python buffer.
---@param buf integer
---@param opts sightline.ResolveOpts
---@return sightline.LineRange?, string?, sightline.LineRange?
function M.resolve(buf, opts)
  local r, err = request(buf, opts)
  if r then
    return r
  end
  local partial
  if opts.member_key and opts.syntax_scope then
    partial = request(buf, { member_key = opts.member_key, near_line = opts.near_line })
  end
  return nil, (tostring(err):gsub('the file', opts.name or 'the file')), partial
end

return M

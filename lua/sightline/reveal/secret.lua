--- Keeping API keys off the screen: a reveal or go_to_position shows the buffer itself (a
--- peek, a scrolled window), so a buffer holding a key is refused as a whole.
local api = vim.api

local M = {}

--- The provider key variables whose values count as secrets when Neovim has them.
M.ENV_VARS = { 'ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'OPENAI_API_KEY', 'OPENROUTER_API_KEY' }

-- Shorter values would match ordinary text.
local MIN_LEN = 8

---@param extra any secrets the caller knows (the core passes the keys it registered)
---@return string[]
local function known(extra)
  local out = {}
  for _, name in ipairs(M.ENV_VARS) do
    local v = vim.env[name]
    if type(v) == 'string' and #v >= MIN_LEN then
      out[#out + 1] = v
    end
  end
  if type(extra) == 'table' then
    for _, v in ipairs(extra) do
      if type(v) == 'string' and #v >= MIN_LEN then
        out[#out + 1] = v
      end
    end
  end
  return out
end

--- The first line (1-based) of buf holding a known secret, or nil. Whole buffer, in chunks:
--- any view of the buffer could scroll to the key.
---@param buf integer
---@param extra string[]?
---@return integer?
function M.line_with_secret(buf, extra)
  local secrets = known(extra)
  if #secrets == 0 then
    return nil
  end
  local count, row = api.nvim_buf_line_count(buf), 0
  while row < count do
    local lines = api.nvim_buf_get_lines(buf, row, math.min(row + 4096, count), false)
    for i, line in ipairs(lines) do
      for _, s in ipairs(secrets) do
        if line:find(s, 1, true) then
          return row + i
        end
      end
    end
    row = row + #lines
  end
  return nil
end

return M

---@mod sightline.port  The Lua the core calls, and nothing else calls the core from here.
---Data in, data out: no sentences, no decisions, never a call back into the core.
local M = {}

local MAX_ITEMS = 1000 -- far above what the core shows; keeps one answer small

---Diagnostics of loaded buffers under `root`, or of the buffer of `path` alone.
---@param opts { root: string, path?: string }
---@return { loaded: boolean, items: table[], truncated: boolean }
function M.diagnostics(opts)
  local root = vim.fs.normalize(opts.root)
  local want = opts.path and vim.fs.normalize(opts.path) or nil
  local out = { loaded = false, items = {}, truncated = false }
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_is_loaded(buf) and vim.api.nvim_buf_get_name(buf) or ''
    if name ~= '' then
      name = vim.fs.normalize(vim.uv.fs_realpath(name) or name)
    end
    local match
    if want then
      match = name == want
    else
      match = name ~= '' and vim.startswith(name, root .. '/') and vim.bo[buf].buftype == ''
    end
    if match then
      out.loaded = true
      for _, d in ipairs(vim.diagnostic.get(buf)) do
        if #out.items >= MAX_ITEMS then
          out.truncated = true
          break
        end
        table.insert(out.items, {
          path = name,
          lnum = d.lnum,
          col = d.col,
          end_lnum = d.end_lnum or d.lnum,
          severity = d.severity,
          message = d.message,
          source = d.source,
          code = d.code ~= nil and tostring(d.code) or nil,
        })
      end
    end
  end
  return out
end

---Draw an edit proposal's hunks in its buffer while it waits (sightline.inline).
---@param spec sightline.HunkSpec
---@return boolean drawn
function M.show_hunks(spec)
  return require('sightline.inline').show(spec)
end

---Remove the inline drawing of proposal `id` (decided, stopped, turn over).
---@param id integer
function M.clear_hunks(id)
  local inline = package.loaded['sightline.inline']
  if inline then
    inline.clear(id)
  end
end

return M

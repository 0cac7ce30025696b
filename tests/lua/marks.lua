-- Extmark readers: the reveal band, every reveal mark, the transcript's markdown marks.
-- Called in a child Neovim as lua_helper(nv, 'marks.<function>', ...) (tests/lua_helper.py).
local M = {}

-- The reveal band's rows, {start_row, end_row} per mark: of the buffer named `name`, or the
-- current buffer without one ({} when no buffer has that name).
function M.band(name)
  local buf = name and vim.fn.bufnr(name) or 0
  if buf < 0 then
    return {}
  end
  local ns = vim.api.nvim_create_namespace('sightline.reveal')
  local out = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
    if m[4].hl_group == 'SightlineReveal' then
      table.insert(out, { m[2], m[4].end_row })
    end
  end
  return out
end

-- Every mark of sightline.reveal in every buffer, with the fields the tests check.
function M.reveal()
  local ns = require('sightline.reveal').ns
  local out = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(b, ns, 0, -1, { details = true })) do
      local d = m[4]
      out[#out + 1] = {
        buf = b,
        row = m[2],
        col = m[3],
        end_row = d.end_row,
        end_col = d.end_col,
        hl_group = d.hl_group,
        hl_eol = d.hl_eol,
        sign_text = d.sign_text,
        sign_hl_group = d.sign_hl_group,
        number_hl_group = d.number_hl_group,
      }
    end
  end
  return out
end

-- The transcript's markdown marks once the pane has rendered every span it shows (a streamed
-- reply's last span is rendered again at most every 66 ms: see markdown.lua RENDER_MS).
function M.markdown_settled()
  local S = require('sightline.ui.pane.state').S
  assert(
    vim.wait(5000, function()
      return #S.md_pending == 0 and not S.md_painting
    end, 1),
    'Markdown still pending'
  )
  return M.markdown()
end

-- The transcript's markdown marks, one sorted string per mark (row:col:end:hl:conceal:prio).
function M.markdown()
  local buf = require('sightline.ui.pane').buffers().transcript
  local ns = vim.api.nvim_create_namespace('sightline.markdown')
  local out = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
    local d = m[4]
    table.insert(
      out,
      table.concat(
        { m[2], m[3], d.end_row or -1, d.end_col or -1, d.hl_group or '', d.conceal or '', d.priority or 0 },
        ':'
      )
    )
  end
  table.sort(out)
  return out
end

return M

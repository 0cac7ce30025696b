--- The reveal's marks: a band over the lines and a bar beside them, in one namespace, and the
--- timer that takes them away again. One reveal per buffer.
local api = vim.api
local peek = require('sightline.reveal.peek')

local M = {}

M.ns = api.nvim_create_namespace('sightline.reveal')

-- A block glyph fills the cell's height, so the signs of adjacent lines join into one bar.
local BAR_GLYPH = '▎'

---@class sightline.Active  one reveal per buffer
---@field gen integer
---@field timer? uv.uv_timer_t

---@type table<integer, sightline.Active>
local active = {}
local generation = 0

--- The bar's sign may only show where it cannot open a sign column and shift the text: every
--- window showing buf already shows one ('yes', 'number' beside numbers, or 'auto'/'auto:1'
--- with signs present).
---@param buf integer
---@return boolean
function M.signs_safe(buf)
  local has_signs
  for _, w in ipairs(vim.fn.win_findbuf(buf)) do
    if vim.w[w].sightline_role ~= peek.ROLE then
      local sc = vim.wo[w].signcolumn
      if sc == 'number' then
        if not (vim.wo[w].number or vim.wo[w].relativenumber) then
          return false
        end
      elseif sc == 'auto' or sc == 'auto:1' then
        if has_signs == nil then
          has_signs = #api.nvim_buf_get_extmarks(buf, -1, 0, -1, { type = 'sign', limit = 1 }) > 0
        end
        if not has_signs then
          return false
        end
      elseif not sc:match('^yes') then
        return false
      end
    end
  end
  return true
end

---@param buf integer
---@param s integer
---@param e integer
---@param with_signs boolean
function M.paint(buf, s, e, with_signs)
  -- The band covers whole lines, empty ones and past the end of line included.
  api.nvim_buf_set_extmark(buf, M.ns, s - 1, 0, {
    end_row = e,
    end_col = 0,
    hl_group = 'SightlineReveal',
    hl_eol = true,
  })
  -- One ranged extmark marks every line of the range: a single continuous bar.
  local bar = { end_row = e - 1, number_hl_group = 'SightlineRevealBar', priority = 4096 }
  if with_signs then
    bar.sign_text, bar.sign_hl_group = BAR_GLYPH, 'SightlineRevealBar'
  end
  api.nvim_buf_set_extmark(buf, M.ns, s - 1, 0, bar)
end

--- Remove the reveal in buf (or all of them): extmarks, timer and its peek.
---@param buf integer?
function M.clear(buf)
  if buf == nil then
    for b in pairs(active) do
      M.clear(b)
    end
    peek.close()
    return
  end
  local st = active[buf]
  active[buf] = nil
  if st and st.timer and not st.timer:is_closing() then
    st.timer:stop()
    st.timer:close()
  end
  peek.close(buf)
  if api.nvim_buf_is_valid(buf) then
    pcall(api.nvim_buf_clear_namespace, buf, M.ns, 0, -1)
  end
end

--- Clear buf's reveal after duration ms.
---@param buf integer
---@param duration integer
function M.arm_timer(buf, duration)
  generation = generation + 1
  local gen = generation
  local st = { gen = gen }
  active[buf] = st
  st.timer = vim.defer_fn(function()
    -- A newer reveal in this buffer owns the state now.
    if active[buf] and active[buf].gen == gen then
      pcall(M.clear, buf)
    end
  end, duration)
end

return M

--- Reveal's highlight groups: a pink band blended into the colour scheme's background and a
--- bar in the accent colour.
local api = vim.api

local M = {}

local ACCENT = 0xFF6B9D
local BAND_ALPHA = 48 / 255

local ready = false

---@param c integer 0xRRGGBB
---@return integer r, integer g, integer b
local function rgb(c)
  return math.floor(c / 65536) % 256, math.floor(c / 256) % 256, c % 256
end

---@return integer
local function blend(fg, bg, alpha)
  local fr, fg_, fb = rgb(fg)
  local br, bg_, bb = rgb(bg)
  local function mix(f, b)
    return math.floor(b + (f - b) * alpha + 0.5)
  end
  return mix(fr, br) * 65536 + mix(fg_, bg_) * 256 + mix(fb, bb)
end

--- Define SightlineReveal (the band) and SightlineRevealBar (the bar) as `default` groups.
--- Called at load and on ColorScheme by the plugin, and lazily before the first paint.
function M.setup()
  local normal = api.nvim_get_hl(0, { name = 'Normal', link = false })
  local light = vim.o.background == 'light'
  local base = normal.bg or (light and 0xFFFFFF or 0x000000)
  if normal.bg then
    local r, g, b = rgb(normal.bg)
    light = (0.299 * r + 0.587 * g + 0.114 * b) > 127
  end
  -- cterm: without 'termguicolors' the terminal's real background is unknown, so pick a fixed
  -- pink per background brightness instead of blending.
  api.nvim_set_hl(0, 'SightlineReveal', {
    default = true,
    bg = blend(ACCENT, base, BAND_ALPHA),
    ctermbg = light and 225 or 53,
  })
  api.nvim_set_hl(0, 'SightlineRevealBar', { default = true, fg = ACCENT, ctermfg = 204, bold = true })
end

--- Define the groups once, before the first paint.
function M.ensure()
  if ready then
    return
  end
  ready = true
  M.setup()
  -- The plugin file re-applies them too; this keeps the module correct when required alone.
  api.nvim_create_autocmd('ColorScheme', {
    group = api.nvim_create_augroup('sightline.reveal.hl', { clear = true }),
    callback = function()
      M.setup()
    end,
  })
end

return M

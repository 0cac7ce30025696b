---@mod sightline.ui.highlights  Highlight groups, linked with default = true; re-applied on ColorScheme.
local M = {}

local links = {
  SightlineUser = 'Title',
  SightlineAssistant = 'Special',
  SightlineNote = 'Comment',
  SightlineThinking = 'Comment', -- the model's thinking, above its reply
  SightlineWarning = 'WarningMsg',
  SightlineError = 'ErrorMsg',
  SightlineWorking = 'DiagnosticInfo',
  SightlineChip = 'Underlined',
  SightlineDiffAdd = 'DiffAdd',
  SightlineDiffDelete = 'DiffDelete',
  -- The edit proposal drawn in its buffer (sightline.ui.inline).
  SightlineHunkAdd = 'DiffAdd',
  SightlineHunkDelete = 'DiffDelete',
  SightlineHunkChange = 'DiffText',
  SightlineHint = 'NonText',
  SightlineQueued = 'Comment', -- messages waiting for the turn to end (sightline-pane-steer)
  SightlineOutput = 'Comment',
  SightlineCompareHint = 'WarningMsg',
}

---Link every group to its default (`default = true`: a colour scheme's own wins); run at
---setup and on ColorScheme.
function M.apply()
  for group, target in pairs(links) do
    vim.api.nvim_set_hl(0, group, { link = target, default = true })
  end
  -- Reveal derives its colours from Normal; it paints its own groups before first use,
  -- so only a loaded module needs refreshing here (nothing heavy at start-up).
  local reveal = package.loaded['sightline.reveal']
  if reveal and reveal.setup_highlights then
    reveal.setup_highlights()
  end
end

return M

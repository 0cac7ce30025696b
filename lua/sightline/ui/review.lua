---@mod sightline.ui.review  :Sightline review [{git-ref}]: every change as a quickfix list of hunks.
---The core lists the hunks and then offers each file's reverts in its buffer (the review gate's
---inline hunk view); this sets the list and says what it holds.
local M = {}

---@param args string[]
---@return boolean? ok, string? err
function M.command(args)
  local ref = args[1]
  local res, err = require('sightline.host').request('changes.review', { ref = ref })
  if not res then
    return nil, err
  end
  local items = res.items ---@type {filename: string, lnum: integer, text: string}[]
  local message = require('sightline.ui.message')
  if #items == 0 then
    message.notify(
      ref and ('sightline: nothing changed since %s'):format(ref)
        or 'sightline: no change of this conversation to review',
      vim.log.levels.INFO
    )
    return true
  end
  local title = ref and ('sightline: changes since %s'):format(ref) or 'sightline: changes of this conversation'
  vim.fn.setqflist({}, ' ', { title = title, items = items })
  local files = {}
  for _, item in ipairs(items) do
    files[item.filename] = true
  end
  message.notify(
    ('sightline: %d hunks in %d files in the quickfix list (:cnext walks them); accept a hunk to revert it'):format(
      #items,
      vim.tbl_count(files)
    ),
    vim.log.levels.INFO
  )
  return true
end

return M

---@mod sightline.ui.rewind  :Sightline rewind: pick a checkpoint of this conversation, rewind to before it.
---The core decides what each file gets (python/sightline/agent/rewind.py); this only picks.
local M = {}

---@class sightline.CheckpointItem a checkpoint as checkpoints.list answers
---@field seq integer
---@field kind string 'turn' | 'rewind'
---@field label string
---@field time number
---@field files string[]

---@param c sightline.CheckpointItem
---@return string
local function label(c)
  local files = table.concat(vim.list_slice(c.files, 1, 3), ', ')
  if #c.files > 3 then
    files = files .. (', +%d'):format(#c.files - 3)
  end
  return ('#%d %s  %s  (%s)'):format(c.seq, os.date('%H:%M', c.time), c.label, files)
end

---@param params {seq: integer?, row: integer?, fork: boolean?}
---@return boolean? ok, string? err
local function rewind(params)
  local res, err = require('sightline.host').request('checkpoints.rewind', params)
  if not res then
    return nil, err
  end
  if params.fork then
    if res.text and res.text ~= vim.NIL then
      require('sightline.ui.pane.steer').into_composer(res.text) -- the undone turn's prompt
    end
    require('sightline.ui.message').notify(
      'sightline: rewound in a new conversation without the undone turns; the other one is in :Sightline history',
      vim.log.levels.INFO
    )
  end
  return true
end

---The transcript row under the cursor when the cursor is in the transcript (0-based), else nil.
---@return integer?
local function transcript_row()
  local ok, pane = pcall(require, 'sightline.ui.pane')
  local tbuf = ok and pane.buffers().transcript or nil
  if tbuf and vim.api.nvim_get_current_buf() == tbuf then
    return vim.api.nvim_win_get_cursor(0)[1] - 1
  end
  return nil
end

---`:Sightline rewind [fork] [N]`: rewind to before checkpoint N; in the transcript, to before
---the turn under the cursor; else pick one (the newest first). With `fork`, the conversation
---is forked there first, so the model does not see the undone turns (the other one stays in
---:Sightline history) and the turn's prompt comes back into the composer.
---@param args string[]
---@return boolean? ok, string? err
function M.command(args)
  local fork, seq = false, nil ---@type boolean, integer?
  for _, arg in ipairs(args) do
    local n = tonumber(arg:match('^#?(%d+)$'))
    if arg == 'fork' and not fork then
      fork = true
    elseif n and not seq then
      seq = n
    else
      return nil, ('sightline: rewind takes [fork] and a checkpoint number (#3 or 3), got %q'):format(arg)
    end
  end
  if seq then
    return rewind({ seq = seq, fork = fork })
  end
  local row = transcript_row()
  if row then
    return rewind({ row = row, fork = fork })
  end
  local res, err = require('sightline.host').request('checkpoints.list')
  if not res then
    return nil, err
  end
  local items = res.checkpoints ---@type sightline.CheckpointItem[]
  if fork then
    -- A rewind's own checkpoint has no message to fork at.
    items = vim.tbl_filter(function(c)
      return c.kind == 'turn'
    end, items)
  end
  if #items == 0 then
    return nil, 'sightline: nothing to rewind: no turn of this conversation changed a file'
  end
  local prompt = fork and 'sightline: rewind the files and fork the conversation to before which turn?'
    or 'sightline: rewind the files to before which turn?'
  vim.ui.select(items, { prompt = prompt, format_item = label, kind = 'sightline.rewind' }, function(choice)
    if choice then
      -- After the picker is gone (the default one calls back from inside its prompt).
      vim.schedule(function()
        local ok, msg = rewind({ seq = choice.seq, fork = fork })
        if not ok and msg then
          require('sightline.ui.message').notify(msg, vim.log.levels.WARN)
        end
      end)
    end
  end)
  return true
end

return M

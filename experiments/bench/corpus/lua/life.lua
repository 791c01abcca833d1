-- life: Conway's game of life on a torus stored as an array of row arrays of 0/1 numbers, with a
-- second grid as the back buffer. Seeds a random soup (LCG) plus a glider, counts neighbours with
-- wrapped row and column indices, and prints the population every quarter of the run, the
-- number of cells that changed, and a checksum of the final grid.
-- Rows and columns are 0-based as in the other twins (arrays indexed with +1).
local floor, max = math.floor, math.max
local seed = 2718

local function rand(n)
  seed = (seed * 69069 + 1) % 4294967296
  return floor(seed / 65536) % n
end

local function make_grid(h, w)
  local g = {}
  for r = 1, h do
    local row = {}
    for c = 1, w do row[c] = 0 end
    g[r] = row
  end
  return g
end

local function step(cur, nxt, h, w)
  local changed = 0
  for r = 0, h - 1 do
    local up = cur[(r + h - 1) % h + 1]
    local row = cur[r + 1]
    local down = cur[(r + 1) % h + 1]
    local out = nxt[r + 1]
    for c = 0, w - 1 do
      local left = (c + w - 1) % w + 1
      local right = (c + 1) % w + 1
      local cc = c + 1
      local n = up[left] + up[cc] + up[right] + row[left] + row[right] + down[left] + down[cc] + down[right]
      local alive = row[cc]
      local v = 0
      if n == 3 or (n == 2 and alive == 1) then v = 1 end
      if v ~= alive then changed = changed + 1 end
      out[cc] = v
    end
  end
  return changed
end

local function population(g)
  local p = 0
  for r = 1, #g do
    local row = g[r]
    for c = 1, #row do p = p + row[c] end
  end
  return p
end

local gens = tonumber(arg and arg[1]) or 6000
local h, w = 64, 96
local cur = make_grid(h, w)
local nxt = make_grid(h, w)
for r = 8, h - 9 do
  for c = 8, floor(w / 2) - 1 do
    if rand(100) < 35 then cur[r + 1][c + 1] = 1 end
  end
end
cur[3][71] = 1
cur[4][72] = 1
cur[5][70] = 1
cur[5][71] = 1
cur[5][72] = 1
print(string.format("gen 0 population %d", population(cur)))
local changes = 0
for g = 1, gens do
  changes = changes + step(cur, nxt, h, w)
  cur, nxt = nxt, cur
  if g % max(1, floor(gens / 4)) == 0 then
    print(string.format("gen %d population %d", g, population(cur)))
  end
end
local check = 0
for r = 0, h - 1 do
  for c = 0, w - 1 do check = (check * 3 + cur[r + 1][c + 1] * (r * w + c + 1)) % 1000000007 end
end
print(string.format("changes %d checksum %d", changes, check))

-- stencil_2d: Jacobi iteration for a Poisson problem on an N x N grid held as an array of float
-- rows, with a second grid as the back buffer. The top edge is held at 0.7, the other edges at
-- 0.0, and a few interior cells (drawn by an LCG) are heat sources. Each sweep computes the
-- 5-point update new[r][c] = 0.25 * (up[c] + down[c] + row[c-1] + row[c+1] + src[r][c]) and the
-- largest change; prints the change, the grid's sum and a weighted checksum every quarter of
-- the run, then the hottest interior cell.
-- Rows and columns are 0-based in the formulas and the output, arrays are indexed with +1.
local floor, max = math.floor, math.max
local seed = 4242

local function rand(n)
  seed = (seed * 69069 + 1) % 4294967296
  return floor(seed / 65536) % n
end

local function make_grid(n)
  local g = {}
  for r = 1, n do
    local row = {}
    for c = 1, n do row[c] = 0.0 end
    g[r] = row
  end
  return g
end

local function sweep(cur, nxt, src, n)
  local delta = 0.0
  for r = 2, n - 1 do
    local up, row, down, f, out = cur[r - 1], cur[r], cur[r + 1], src[r], nxt[r]
    for c = 2, n - 1 do
      local x = 0.25 * (up[c] + down[c] + row[c - 1] + row[c + 1] + f[c])
      local d = x - row[c]
      if d < 0.0 then d = -d end
      if d > delta then delta = d end
      out[c] = x
    end
  end
  return delta
end

local function grid_sum(g)
  local s = 0.0
  for r = 1, #g do
    local row = g[r]
    for c = 1, #row do s = s + row[c] end
  end
  return s
end

local function checksum(g, n)
  local s = 0.0
  for r = 0, n - 1 do
    local row = g[r + 1]
    for c = 0, n - 1 do s = s + row[c + 1] * ((r * 31 + c) % 11 + 1) end
  end
  return s
end

local n = tonumber(arg and arg[1]) or 256
local iters = tonumber(arg and arg[2]) or 1200
local cur, nxt, src = make_grid(n), make_grid(n), make_grid(n)
for c = 1, n do
  cur[1][c] = 0.7
  nxt[1][c] = 0.7
end
for k = 1, max(1, floor(n / 8)) do
  local r = 1 + rand(n - 2)
  local c = 1 + rand(n - 2)
  src[r + 1][c + 1] = src[r + 1][c + 1] + rand(100) / 25.0
end
local quarter = max(1, floor(iters / 4))
for it = 1, iters do
  local delta = sweep(cur, nxt, src, n)
  cur, nxt = nxt, cur
  if it % quarter == 0 then
    print(string.format("sweep %d change %.9f sum %.6f checksum %.6f", it, delta, grid_sum(cur), checksum(cur, n)))
  end
end
local br, bc = 2, 2
for r = 2, n - 1 do
  for c = 2, n - 1 do
    if cur[r][c] > cur[br][bc] then br, bc = r, c end
  end
end
print(string.format("hottest %d %d %.9f", br - 1, bc - 1, cur[br][bc]))

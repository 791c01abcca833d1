-- dp_float_rows: dynamic programming over two float rows swapped after each row of the table.
-- A weighted edit distance between two LCG symbol strings (substitution cost grows with the
-- symbols' distance, insertions and deletions cost by symbol), and dynamic time warping between
-- two LCG float signals (|x - y| plus the smallest of the three neighbours). Each minimum is an
-- explicit comparison chain. Prints both distances for every pair and their totals.
-- Row cell j (0-based in the formulas) is array slot j + 1.
local floor = math.floor
local seed = 27182

local function rand(n)
  seed = (seed * 69069 + 1) % 4294967296
  return floor(seed / 65536) % n
end

local function symbols(n)
  local s = {}
  for i = 1, n do s[i] = rand(16) end
  return s
end

local function signal(n)
  local s = {}
  local level = 0.0
  for i = 1, n do
    level = level * 0.9 + (rand(2001) - 1000) / 250.0
    s[i] = level
  end
  return s
end

local function edit_distance(a, b)
  local m = #b
  local prev, cur = {}, {}
  for j = 1, m + 1 do prev[j] = 0.0; cur[j] = 0.0 end
  for j = 2, m + 1 do prev[j] = prev[j - 1] + 1.0 + 0.125 * b[j - 1] end
  for i = 1, #a do
    local ai = a[i]
    local del_cost = 0.75 + 0.0625 * ai
    cur[1] = prev[1] + del_cost
    for j = 2, m + 1 do
      local bj = b[j - 1]
      local best = prev[j - 1]
      if ai ~= bj then
        local d = ai - bj
        if d < 0 then d = -d end
        best = best + 0.5 + 0.1 * d
      end
      local del = prev[j] + del_cost
      if del < best then best = del end
      local ins = cur[j - 1] + 1.0 + 0.125 * bj
      if ins < best then best = ins end
      cur[j] = best
    end
    prev, cur = cur, prev
  end
  return prev[m + 1]
end

local function dtw(x, y)
  local m = #y
  local prev, cur = {}, {}
  for j = 1, m + 1 do prev[j] = 1.0e30; cur[j] = 1.0e30 end
  prev[1] = 0.0
  for i = 1, #x do
    local xi = x[i]
    cur[1] = 1.0e30
    for j = 2, m + 1 do
      local cost = xi - y[j - 1]
      if cost < 0.0 then cost = -cost end
      local best = prev[j - 1]
      if prev[j] < best then best = prev[j] end
      if cur[j - 1] < best then best = cur[j - 1] end
      cur[j] = cost + best
    end
    prev, cur = cur, prev
  end
  return prev[m + 1]
end

local n = tonumber(arg and arg[1]) or 1600
local pairs = tonumber(arg and arg[2]) or 5
local total_edit, total_dtw = 0.0, 0.0
for p = 0, pairs - 1 do
  local s1 = symbols(n)
  local s2 = symbols(n + p * 7)
  local e = edit_distance(s1, s2)
  local x = signal(n)
  local y = signal(n - p * 5)
  local w = dtw(x, y)
  print(string.format("pair %d edit %.6f dtw %.6f", p, e, w))
  total_edit = total_edit + e
  total_dtw = total_dtw + w
end
print(string.format("total edit %.6f total dtw %.6f", total_edit, total_dtw))

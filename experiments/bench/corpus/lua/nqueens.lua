-- nqueens: backtracking search that recurses from inside a loop. Counts all placements of n
-- non-attacking queens for n = 4..N with column and diagonal occupancy arrays, records the first
-- solution found for each n as a string of column letters, and counts the nodes visited; then
-- recounts the largest n using the mirror symmetry (first queen in the left half only).
-- Rows, columns and diagonals are 0-based (arrays indexed with +1).
local floor = math.floor
local LETTERS = "abcdefghijklmnopqrstuvwxyz"
local nodes = 0
local first = ""

local function filled(n, v)
  local t = {}
  for i = 1, n do t[i] = v end
  return t
end

local function solve(row, n, width, cols, d1, d2, placed)
  if row == n then
    if first == "" then
      local s = ""
      for r = 1, n do s = s .. LETTERS:sub(placed[r] + 1, placed[r] + 1) end
      first = s
    end
    return 1
  end
  local count = 0
  for c = 0, width - 1 do
    if not (cols[c + 1] or d1[row + c + 1] or d2[row - c + n]) then
      nodes = nodes + 1
      cols[c + 1] = true
      d1[row + c + 1] = true
      d2[row - c + n] = true
      placed[row + 1] = c
      count = count + solve(row + 1, n, n, cols, d1, d2, placed)
      cols[c + 1] = false
      d1[row + c + 1] = false
      d2[row - c + n] = false
    end
  end
  return count
end

local function queens(n, width)
  first = ""
  return solve(0, n, width, filled(n, false), filled(2 * n - 1, false), filled(2 * n - 1, false), filled(n, -1))
end

local maxn = tonumber(arg and arg[1]) or 13
local total = 0
for n = 4, maxn do
  local c = queens(n, n)
  total = total + c
  print(string.format("n %d solutions %d first %s", n, c, first))
end
local half = queens(maxn, floor(maxn / 2))
local sym = 2 * half
if maxn % 2 == 1 then
  local cols, d1, d2 = filled(maxn, false), filled(2 * maxn - 1, false), filled(2 * maxn - 1, false)
  local mid = floor(maxn / 2)
  cols[mid + 1] = true
  d1[mid + 1] = true
  d2[maxn - mid] = true
  local placed = filled(maxn, -1)
  placed[1] = mid
  sym = sym + solve(1, maxn, maxn, cols, d1, d2, placed)
end
print(string.format("symmetric recount %d %d", maxn, sym))
print(string.format("total %d nodes %d", total, nodes))

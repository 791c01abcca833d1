-- memo_paths: memoised recursion with the memo tables in flat arrays (-1 = not yet known).
-- Counts partitions of n into parts of at most k (mod 1e9+7), computes the edit distance of two
-- generated strings top-down, and counts monotone lattice paths around LCG obstacles; each
-- recursive function consults and fills its memo. Prints the three results and the memo hits.
-- Memo indices are 0-based as in the other twins (arrays indexed with +1).
local floor, min = math.floor, math.min
local MOD = 1000000007
local hits = 0
local seed = 5

local function rand(n)
  seed = (seed * 69069 + 1) % 4294967296
  return floor(seed / 65536) % n
end

local function filled(n, v)
  local t = {}
  for i = 1, n do t[i] = v end
  return t
end

local function parts(n, k, memo, width)
  if n == 0 then return 1 end
  if n < 0 or k == 0 then return 0 end
  local idx = n * width + k + 1
  if memo[idx] >= 0 then hits = hits + 1; return memo[idx] end
  local r = (parts(n - k, k, memo, width) + parts(n, k - 1, memo, width)) % MOD
  memo[idx] = r
  return r
end

local function edit(s, t, i, j, memo)
  if i == #s then return #t - j end
  if j == #t then return #s - i end
  local idx = i * (#t + 1) + j + 1
  if memo[idx] >= 0 then hits = hits + 1; return memo[idx] end
  local r
  if s:sub(i + 1, i + 1) == t:sub(j + 1, j + 1) then
    r = edit(s, t, i + 1, j + 1, memo)
  else
    r = 1 + min(edit(s, t, i + 1, j + 1, memo), min(edit(s, t, i + 1, j, memo), edit(s, t, i, j + 1, memo)))
  end
  memo[idx] = r
  return r
end

local function paths(grid, w, r, c, memo)
  if r < 0 or c < 0 then return 0 end
  local idx = r * w + c + 1
  if grid[idx] then return 0 end
  if r == 0 and c == 0 then return 1 end
  if memo[idx] >= 0 then hits = hits + 1; return memo[idx] end
  local v = (paths(grid, w, r - 1, c, memo) + paths(grid, w, r, c - 1, memo)) % MOD
  memo[idx] = v
  return v
end

local function gen_string(n, alphabet)
  local s = ""
  for i = 1, n do
    local k = rand(#alphabet) + 1
    s = s .. alphabet:sub(k, k)
  end
  return s
end

local n = tonumber(arg and arg[1]) or 700
local total = 0
for rep = 0, 2 do
  local m = n - rep * 7
  local p = parts(m, m, filled((m + 1) * (m + 1), -1), m + 1)
  print(string.format("partitions %d %d", m, p))
  total = (total + p) % MOD
end

local s = gen_string(floor(n / 2), "acgt")
local t = gen_string(floor(n / 2) + 13, "acgt")
local ed = edit(s, t, 0, 0, filled((#s + 1) * (#t + 1), -1))
print(string.format("edit distance %d %d %d", #s, #t, ed))

local w = floor(n / 2)
local grid = filled(w * w, false)
for k = 1, floor(w * w / 9) do grid[rand(w * w) + 1] = true end
grid[1] = false
grid[w * w] = false
local pc = paths(grid, w, w - 1, w - 1, filled(w * w, -1))
print(string.format("lattice paths %d %d", w, pc))
print(string.format("memo hits %d checksum %d", hits, (total + ed * 31 + pc) % MOD))

-- string_sort: string comparison and sorting. Generates N words from syllables with random
-- capitals and digits, sorts them bytewise with a bottom-up merge sort, then walks the sorted
-- array: distinct words, the longest common prefix of neighbours (character by character),
-- binary searches for probe words, and a case-insensitive ordering check of a sample.
-- (String order is the C locale's, i.e. bytewise, as lua.c leaves the locale alone.)
local floor, min = math.floor, math.min
local SYL = {"an", "be", "ce", "do", "el", "fa", "go", "hi", "in", "jo", "ka", "lu", "ma", "ne", "o", "pa"}
local LOWER = "abcdefghijklmnopqrstuvwxyz"
local UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
local seed = 1

local function rand(n)
  seed = seed * 48271 % 2147483647
  return seed % n
end

local function make_word()
  local w = ""
  for k = 1, 1 + rand(4) do w = w .. SYL[rand(#SYL) + 1] end
  if rand(5) == 0 then
    local k = rand(26) + 1
    w = UPPER:sub(k, k) .. w
  end
  if rand(7) == 0 then w = w .. string.format("%d", rand(100)) end
  return w
end

local function lower(s)
  local out = ""
  for i = 1, #s do
    local c = s:sub(i, i)
    if c >= "A" and c <= "Z" then
      local k = 1
      while UPPER:sub(k, k) ~= c do k = k + 1 end
      c = LOWER:sub(k, k)
    end
    out = out .. c
  end
  return out
end

-- 0-based ranges as in the other twins, arrays indexed with +1
local function merge_sort(xs)
  local n = #xs
  local src, dst = xs, {}
  local width = 1
  while width < n do
    local lo = 0
    while lo < n do
      local mid = min(lo + width, n)
      local hi = min(lo + 2 * width, n)
      local i, j = lo, mid
      for k = lo, hi - 1 do
        if i < mid and (j >= hi or src[i + 1] <= src[j + 1]) then
          dst[k + 1] = src[i + 1]; i = i + 1
        else
          dst[k + 1] = src[j + 1]; j = j + 1
        end
      end
      lo = hi
    end
    src, dst = dst, src
    width = width * 2
  end
  return src
end

local function common_prefix(a, b)
  local n = min(#a, #b)
  local k = 0
  while k < n and a:byte(k + 1) == b:byte(k + 1) do k = k + 1 end
  return k
end

local function search(xs, w)
  local lo, hi = 0, #xs
  while lo < hi do
    local mid = floor((lo + hi) / 2)
    if xs[mid + 1] < w then lo = mid + 1 else hi = mid end
  end
  return lo < #xs and xs[lo + 1] == w
end

local n = tonumber(arg and arg[1]) or 100000
local words = {}
for i = 1, n do words[i] = make_word() end
local sorted = merge_sort(words)
local distinct, lcp_total, lcp_max = 1, 0, 0
for i = 2, n do
  assert(sorted[i - 1] <= sorted[i])
  if sorted[i] ~= sorted[i - 1] then distinct = distinct + 1 end
  local p = common_prefix(sorted[i - 1], sorted[i])
  lcp_total = lcp_total + p
  if p > lcp_max then lcp_max = p end
end
print(string.format("words %d distinct %d lcp total %d lcp max %d", n, distinct, lcp_total, lcp_max))
print("first " .. sorted[1] .. " " .. sorted[2] .. " " .. sorted[3] .. " last " .. sorted[n])
local found = 0
for q = 1, floor(n / 4) do
  if search(sorted, make_word()) then found = found + 1 end
end
print(string.format("probes found %d of %d", found, floor(n / 4)))
local sample = {}
for i = 0, n - 1, 97 do sample[#sample + 1] = lower(sorted[i + 1]) end
local folded = merge_sort(sample)
local moved = 0
for i = 1, #sample do
  if folded[i] ~= sample[i] then moved = moved + 1 end
end
print(string.format("case-folded sample %d moved %d first %s", #sample, moved, folded[1]))

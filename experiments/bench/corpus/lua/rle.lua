-- rle: run-length encoding and decoding. Generates strings made of runs (LCG run lengths over a
-- small alphabet), encodes them as "<count><char>" text and as an array of {count, char} pairs,
-- decodes the text back by scanning digits, checks the round trip, and compresses bitmap rows
-- of 0/1 numbers into run arrays that are intersected run by run. Prints sizes and checksums.
-- String positions and pixel columns are 0-based as in the other twins.
local floor, min, max = math.floor, math.min, math.max
local ALPHA = "abcxyz."
local seed = 55

local function rand(n)
  seed = seed * 48271 % 2147483647
  return seed % n
end

local function ch(s, i) return s:sub(i + 1, i + 1) end

local function gen_runs(nruns)
  local s = ""
  local prev = ""
  for r = 1, nruns do
    local c = ch(ALPHA, rand(#ALPHA))
    while c == prev do c = ch(ALPHA, rand(#ALPHA)) end
    prev = c
    local k = 1 + rand(4)
    if rand(6) == 0 then k = k + rand(30) end
    for i = 1, k do s = s .. c end
  end
  return s
end

local function encode(s)
  local out = ""
  local pairs = {}
  local i = 0
  while i < #s do
    local j = i + 1
    while j < #s and ch(s, j) == ch(s, i) do j = j + 1 end
    out = out .. string.format("%d", j - i) .. ch(s, i)
    pairs[#pairs + 1] = {j - i, ch(s, i)}
    i = j
  end
  return out, pairs
end

local function decode(code)
  local out = ""
  local count = 0
  for i = 0, #code - 1 do
    local c = ch(code, i)
    if c >= "0" and c <= "9" then
      count = count * 10 + tonumber(c)
    else
      for k = 1, count do out = out .. c end
      count = 0
    end
  end
  return out
end

local function row_runs(row, width)
  local runs = {}
  local start = -1
  for i = 0, width - 1 do
    if row[i + 1] == 1 and start < 0 then start = i end
    if row[i + 1] == 0 and start >= 0 then runs[#runs + 1] = {start, i}; start = -1 end
  end
  if start >= 0 then runs[#runs + 1] = {start, width} end
  return runs
end

local function intersect(a, b)
  local out = {}
  local i, j = 1, 1
  while i <= #a and j <= #b do
    local lo = max(a[i][1], b[j][1])
    local hi = min(a[i][2], b[j][2])
    if lo < hi then out[#out + 1] = {lo, hi} end
    if a[i][2] < b[j][2] then i = i + 1 else j = j + 1 end
  end
  return out
end

local n = tonumber(arg and arg[1]) or 6000
local raw, coded, longest, check = 0, 0, 0, 0
for t = 0, n - 1 do
  local s = gen_runs(20 + rand(20))
  local code, pairs = encode(s)
  assert(decode(code) == s, "round trip failed")
  raw = raw + #s
  coded = coded + #code
  for k = 1, #pairs do
    if pairs[k][1] > longest then longest = pairs[k][1] end
  end
  check = (check * 31 + #code * #pairs) % 1000000007
  if t == 0 then print(code) end
end
print(string.format("strings %d raw %d encoded %d longest run %d checksum %d", n, raw, coded, longest, check))
local width = 200
local overlap, runs_total = 0, 0
local rows = floor(n / 4)
for r = 0, rows - 1 do
  local row1, row2 = {}, {}
  for i = 0, width - 1 do
    row1[i + 1] = 0
    row2[i + 1] = 0
    if floor(i / (3 + r % 7)) % 2 == 0 then row1[i + 1] = 1 end
    if rand(3) ~= 0 then row2[i + 1] = 1 end
  end
  local inter = intersect(row_runs(row1, width), row_runs(row2, width))
  runs_total = runs_total + #inter
  for k = 1, #inter do overlap = overlap + inter[k][2] - inter[k][1] end
end
print(string.format("bitmap rows %d intersection runs %d overlap pixels %d", rows, runs_total, overlap))

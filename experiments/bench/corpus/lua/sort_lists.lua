-- sort_lists: hand-written sorts on arrays. Quicksort (median of three, insertion sort below 12
-- elements, recursion on the smaller side and a loop on the larger), top-down merge sort with a
-- scratch array, both on integers and on floats, and a stable merge sort of {key, id} records
-- checked for stability. Prints checksums of the sorted data and the comparisons counted.
-- Ranges lo..hi are 0-based as in the other twins (arrays indexed with +1).
local floor = math.floor
local seed = 4242
local comparisons = 0

local function rand(n)
  seed = seed * 48271 % 2147483647
  return seed % n
end

local function insertion(xs, lo, hi)
  for i = lo + 1, hi do
    local v = xs[i + 1]
    local j = i - 1
    while j >= lo and xs[j + 1] > v do
      xs[j + 2] = xs[j + 1]; j = j - 1; comparisons = comparisons + 1
    end
    xs[j + 2] = v
  end
end

local function quicksort(xs, lo, hi)
  while hi - lo > 11 do
    local mid = floor((lo + hi) / 2)
    if xs[mid + 1] < xs[lo + 1] then xs[mid + 1], xs[lo + 1] = xs[lo + 1], xs[mid + 1] end
    if xs[hi + 1] < xs[lo + 1] then xs[hi + 1], xs[lo + 1] = xs[lo + 1], xs[hi + 1] end
    if xs[hi + 1] < xs[mid + 1] then xs[hi + 1], xs[mid + 1] = xs[mid + 1], xs[hi + 1] end
    local pivot = xs[mid + 1]
    local i, j = lo, hi
    while i <= j do
      while xs[i + 1] < pivot do i = i + 1; comparisons = comparisons + 1 end
      while xs[j + 1] > pivot do j = j - 1; comparisons = comparisons + 1 end
      if i <= j then
        xs[i + 1], xs[j + 1] = xs[j + 1], xs[i + 1]
        i = i + 1; j = j - 1
      end
    end
    if j - lo < hi - i then quicksort(xs, lo, j); lo = i else quicksort(xs, i, hi); hi = j end
  end
  insertion(xs, lo, hi)
end

local function merge_sort(xs, tmp, lo, hi, key)
  if hi - lo < 1 then return end
  local mid = floor((lo + hi) / 2)
  merge_sort(xs, tmp, lo, mid, key)
  merge_sort(xs, tmp, mid + 1, hi, key)
  local i, j, k = lo, mid + 1, lo
  while i <= mid and j <= hi do
    comparisons = comparisons + 1
    local take_left
    if key then take_left = xs[i + 1][1] <= xs[j + 1][1] else take_left = xs[i + 1] <= xs[j + 1] end
    if take_left then tmp[k + 1] = xs[i + 1]; i = i + 1 else tmp[k + 1] = xs[j + 1]; j = j + 1 end
    k = k + 1
  end
  while i <= mid do tmp[k + 1] = xs[i + 1]; i = i + 1; k = k + 1 end
  while j <= hi do tmp[k + 1] = xs[j + 1]; j = j + 1; k = k + 1 end
  for t = lo + 1, hi + 1 do xs[t] = tmp[t] end
end

local function checksum(xs)
  local h = 0
  for i = 1, #xs do
    assert(i == 1 or xs[i - 1] <= xs[i], "not sorted")
    h = (h * 31 + floor(xs[i] * 8)) % 1000000007
  end
  return h
end

local function copy(xs)
  local c = {}
  for i = 1, #xs do c[i] = xs[i] end
  return c
end

local n = tonumber(arg and arg[1]) or 200000
local ints, floats = {}, {}
for i = 1, n do ints[i] = rand(1000000); floats[i] = rand(100000) / 8.0 - 5000.0 end
local q1 = copy(ints)
quicksort(q1, 0, n - 1)
local m1 = copy(ints)
merge_sort(m1, {}, 0, n - 1, false)
print(string.format("ints %d %d min %d max %d", checksum(q1), checksum(m1), q1[1], q1[n]))
local q2 = copy(floats)
quicksort(q2, 0, n - 1)
local m2 = copy(floats)
merge_sort(m2, {}, 0, n - 1, false)
print(string.format("floats %d %d median %.3f", checksum(q2), checksum(m2), q2[floor(n / 2) + 1]))
local recs = {}
for i = 0, n - 1 do recs[i + 1] = {rand(100), i} end
merge_sort(recs, {}, 0, n - 1, true)
local stable = true
for i = 2, n do
  if recs[i - 1][1] == recs[i][1] and recs[i - 1][2] > recs[i][2] then stable = false end
end
print(string.format("records stable %s first [%d, %d] last [%d, %d]", tostring(stable),
  recs[1][1], recs[1][2], recs[n][1], recs[n][2]))
print(string.format("comparisons %d", comparisons))

-- segmented_sieve: primes below N with a segmented sieve of Eratosthenes. A simple sieve finds
-- the base primes up to sqrt(N); each segment of 32768 numbers reuses one flag array, marks
-- multiples starting at the first multiple inside the segment, then is scanned for the prime
-- count, the sum of primes, twin primes (also across segment boundaries) and the largest gap.
-- Segment offsets are 0-based (flags indexed with +1).
local floor, sqrt, min, max = math.floor, math.sqrt, math.min, math.max

local function simple_sieve(limit)
  local flags, primes = {}, {}
  for i = 0, limit do flags[i] = true end
  for i = 2, limit do
    if flags[i] then
      primes[#primes + 1] = i
      for j = i * i, limit, i do flags[j] = false end
    end
  end
  return primes
end

local function isqrt(n)
  local r = floor(sqrt(n))
  while r * r > n do r = r - 1 end
  while (r + 1) * (r + 1) <= n do r = r + 1 end
  return r
end

local n = tonumber(arg and arg[1]) or 100000000
local seg = 32768
local base = simple_sieve(isqrt(n))
local flags = {}
for i = 1, seg do flags[i] = true end
local count, total, twins, last, gap, gap_at = 0, 0, 0, -10, 0, 0
local lo = 0
while lo < n do
  local hi = min(lo + seg, n)
  for i = 1, hi - lo do flags[i] = true end
  for k = 1, #base do
    local p = base[k]
    if p * p >= hi then break end
    local start = max(p * p, floor((lo + p - 1) / p) * p)
    for j = start - lo, hi - lo - 1, p do flags[j + 1] = false end
  end
  for i = 0, hi - lo - 1 do
    if flags[i + 1] then
      local v = lo + i
      if v >= 2 then
        count = count + 1
        total = (total + v) % 1000000007
        if v - last == 2 then twins = twins + 1 end
        if last > 0 and v - last > gap then gap = v - last; gap_at = last end
        last = v
      end
    end
  end
  lo = hi
end
print(string.format("primes below %d %d", n, count))
print(string.format("sum mod 1e9+7 %d twin pairs %d", total, twins))
print(string.format("largest gap %d after %d last prime %d", gap, gap_at, last))

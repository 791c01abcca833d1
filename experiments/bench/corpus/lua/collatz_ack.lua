-- collatz_ack: integer workloads. Collatz chain lengths for 1..N with a cache array for values
-- below N (the loop exits early as soon as the chain falls into the cache), the longest chain
-- and the highest value reached; then the Ackermann function A(2, n) and A(3, k) by plain
-- recursion, counting calls.
local floor = math.floor
local calls = 0

local function ack(m, n)
  calls = calls + 1
  if m == 0 then return n + 1 end
  if n == 0 then return ack(m - 1, 1) end
  return ack(m - 1, ack(m, n - 1))
end

local function collatz(limit)
  local cache = {}
  for i = 0, limit - 1 do cache[i] = 0 end
  cache[1] = 1
  local best, best_len, peak, total = 1, 1, 1, 0
  for start = 2, limit - 1 do
    local x = start
    local steps = 0
    while x >= limit or cache[x] == 0 do
      if x % 2 == 0 then
        x = floor(x / 2)
      else
        x = 3 * x + 1
        if x > peak then peak = x end
      end
      steps = steps + 1
    end
    local length = steps + cache[x]
    cache[start] = length
    total = total + length
    if length > best_len then best_len = length; best = start end
  end
  return best, best_len, peak, total
end

local n = tonumber(arg and arg[1]) or 3000000
local k = tonumber(arg and arg[2]) or 9
local best, best_len, peak, total = collatz(n)
print(string.format("collatz below %d longest start %d length %d peak %d total %d", n, best, best_len, peak, total))
for m = 0, 2 do
  calls = 0
  local v = ack(m, 2 * k)
  print(string.format("A(%d, %d) = %d calls %d", m, 2 * k, v, calls))
end
for j = 1, k do
  calls = 0
  local v = ack(3, j)
  assert(v == 2 ^ (j + 3) - 3)
  print(string.format("A(3, %d) = %d calls %d", j, v, calls))
end

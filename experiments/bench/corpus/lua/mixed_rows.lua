-- mixed_rows: arrays of numbers that hold integers and floats mixed (under Lua 5.4; LuaJIT has
-- only doubles). A weight array mixes integer weights (1, 2, 3) with float ones; a count array
-- starts as integer zeros and receives events: every fourth event adds the integer 1 to its
-- bin, the others add the bin's weight, so a bin stays an integer until a float weight lands on
-- it. After each round the bins above a cap are halved with floor() (turning them back into
-- integers), and a scoring pass multiplies counts by weights and sums neighbour differences.
-- Prints, per quarter of the rounds, the number of integral bins, the folded bins and the
-- array's sums; then a checksum. Bin b (0-based) is array slot b + 1.
local floor, max = math.floor, math.max
local seed = 777

local function rand(n)
  seed = (seed * 69069 + 1) % 4294967296
  return floor(seed / 65536) % n
end

local function make_weights(nb)
  local w = {}
  for b = 1, nb do
    local k = rand(5)
    if k < 3 then w[b] = k + 1 else w[b] = 0.35 + 0.1 * rand(8) end
  end
  return w
end

local function events(counts, weights, nb, m)
  local x = seed
  for e = 0, m - 1 do
    x = (x * 69069 + 12345) % 4294967296
    local b = floor(x / 65536) % nb + 1
    if e % 4 == 0 then
      counts[b] = counts[b] + 1
    else
      counts[b] = counts[b] + weights[b]
    end
  end
  seed = x
end

local function fold(counts, nb, cap)
  local folded = 0
  for b = 1, nb do
    local c = counts[b]
    if c > cap then
      counts[b] = floor(c / 2)
      folded = folded + 1
    end
  end
  return folded
end

local function score(counts, weights, nb)
  local s, rough = 0, 0.0
  for b = 1, nb do s = s + counts[b] * weights[b] end
  for b = 2, nb do
    local d = counts[b] - counts[b - 1]
    if d < 0 then d = -d end
    rough = rough + d
  end
  return s, rough
end

local function integral(counts, nb)
  local k = 0
  for b = 1, nb do
    if counts[b] == floor(counts[b]) then k = k + 1 end
  end
  return k
end

local nb = tonumber(arg and arg[1]) or 2000
local rounds = tonumber(arg and arg[2]) or 600
local weights = make_weights(nb)
local counts = {}
for b = 1, nb do counts[b] = 0 end
local per_round = nb * 20
local cap = 400
local folded = 0
local total = 0.0
for r = 1, rounds do
  events(counts, weights, nb, per_round)
  local s, rough = score(counts, weights, nb)
  total = total + s
  folded = folded + fold(counts, nb, cap)
  if r % max(1, floor(rounds / 4)) == 0 then
    print(string.format("round %d integral %d folded %d score %.4f roughness %.4f",
      r, integral(counts, nb), folded, s, rough))
  end
end
local check = 0
for b = 1, nb do check = (check * 131 + floor(counts[b] * 8)) % 1000000007 end
print(string.format("total %.4f checksum %d", total, check))

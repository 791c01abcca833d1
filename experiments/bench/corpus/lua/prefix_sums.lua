-- prefix_sums: scans and a 1-D convolution over float arrays. Each round takes an LCG-seeded
-- signal, builds its inclusive prefix sums, answers random range-sum queries from them (and
-- checks a few against direct sums), runs a running-maximum scan and an exponential moving
-- average, convolves the signal with a 15-tap smoothing kernel, compares the kernel's box
-- cousin with the moving average the prefix sums give, and feeds the smoothed signal back in.
-- Prints each quarter's sums; then the checks.
-- Element i (0-based in the formulas) is array slot i + 1; p[i] is slot i + 1 too.
local floor, max = math.floor, math.max
local seed = 16180

local function rand(n)
  seed = (seed * 69069 + 1) % 4294967296
  return floor(seed / 65536) % n
end

local function prefix(x, p)
  local s = 0.0
  p[1] = 0.0
  for i = 1, #x do
    s = s + x[i]
    p[i + 1] = s
  end
end

local function convolve(x, k, y)
  local taps = #k
  for i = 1, #y do
    local s = 0.0
    for t = 1, taps do s = s + k[t] * x[i + t - 1] end
    y[i] = s
  end
end

local function filled(n, v)
  local l = {}
  for i = 1, n do l[i] = v end
  return l
end

local function show_bool(b) if b then return "true" end return "false" end

local n = tonumber(arg and arg[1]) or 50000
local rounds = tonumber(arg and arg[2]) or 80
local taps = 15
local kernel = {}
local ksum = 0.0
for t = 0, taps - 1 do
  local d = t - floor(taps / 2)
  if d < 0 then d = -d end
  local v = 1.0 / (1.0 + 0.25 * d * d)
  kernel[t + 1] = v
  ksum = ksum + v
end
for t = 1, taps do kernel[t] = kernel[t] / ksum end
local box = filled(taps, 1.0 / taps)
local x = filled(n, 0.0)
local level = 0.0
for i = 1, n do
  level = level * 0.95 + (rand(2001) - 1000) / 200.0
  x[i] = level
end
local p = filled(n + 1, 0.0)
local y = filled(n - taps + 1, 0.0)
local yb = filled(n - taps + 1, 0.0)
local ema = filled(n, 0.0)
local checked, worst, worst_box, grand = 0, 0.0, 0.0, 0.0
for r = 1, rounds do
  prefix(x, p)
  local qsum = 0.0
  for q = 0, n - 1 do
    local i = rand(n)
    local j = rand(n)
    if i > j then i, j = j, i end
    local s = p[j + 2] - p[i + 1]
    qsum = qsum + s
    if q % 2000 == 0 then
      local direct = 0.0
      for m = i + 1, j + 1 do direct = direct + x[m] end
      local d = direct - s
      if d < 0.0 then d = -d end
      if d > worst then worst = d end
      checked = checked + 1
    end
  end
  local runmax = x[1]
  local maxsum, e = 0.0, 0.0
  for i = 1, n do
    if x[i] > runmax then runmax = x[i] end
    maxsum = maxsum + runmax
    e = 0.9 * e + 0.1 * x[i]
    ema[i] = e
  end
  convolve(x, kernel, y)
  convolve(x, box, yb)
  for i = 1, #yb do
    local d = yb[i] - (p[i + taps] - p[i]) / taps
    if d < 0.0 then d = -d end
    if d > worst_box then worst_box = d end
  end
  local ysum = 0.0
  for i = 1, #y do ysum = ysum + y[i] end
  grand = grand + (qsum + ysum)
  if r % max(1, floor(rounds / 4)) == 0 then
    print(string.format("round %d total %.6f queries %.4f runmax %.4f ema %.6f smooth %.6f",
      r, p[n + 1], qsum, maxsum, ema[n], ysum))
  end
  for i = 1, #y do x[i] = 0.5 * x[i] + 0.5 * y[i] + (rand(201) - 100) / 400.0 end
end
print(string.format("checked %d range sums agree %s box agrees %s", checked, show_bool(worst < 1e-6), show_bool(worst_box < 1e-6)))
print(string.format("grand %.4f", grand))

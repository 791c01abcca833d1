-- monte_carlo: Monte Carlo estimates driven by two hand-written generators, an LCG masked to 32
-- bits with % 2^32 and a 16-bit multiply-with-carry generator. Estimates pi (points in the unit
-- circle), the integral of exp(-x^2) on [0, 1], runs a 1-D random walk (returns to the origin,
-- farthest excursion) and a three-dice histogram with a chi-square statistic.
local floor, exp, abs = math.floor, math.exp, math.abs
local MASK32 = 4294967296
local lcg_state = 123456789
local mwc_state = 362436069

local function lcg()
  lcg_state = (lcg_state * 69069 + 1234567) % MASK32
  return lcg_state
end

local function mwc()
  mwc_state = 36969 * (mwc_state % 65536) + floor(mwc_state / 65536)
  return mwc_state
end

local function uniform() return lcg() / 4294967296.0 end

local function estimate_pi(n)
  local inside = 0
  for i = 1, n do
    local x = uniform()
    local y = mwc() % 65536 / 65536.0
    if x * x + y * y < 1.0 then inside = inside + 1 end
  end
  return 4.0 * inside / n
end

local function integral(n)
  local s = 0.0
  for i = 1, n do
    local x = uniform()
    s = s + exp(-x * x)
  end
  return s / n
end

local function walk(steps)
  local pos, returns, far = 0, 0, 0
  for i = 1, steps do
    if floor(lcg() / 65536) % 2 == 0 then pos = pos + 1 else pos = pos - 1 end
    if pos == 0 then returns = returns + 1 end
    if abs(pos) > far then far = abs(pos) end
  end
  return returns, far, pos
end

local function dice(rolls)
  local hist, ways = {}, {}
  for s = 0, 18 do hist[s] = 0; ways[s] = 0 end
  for i = 1, rolls do
    local s = 0
    for d = 1, 3 do s = s + 1 + floor(mwc() / 16) % 6 end
    hist[s] = hist[s] + 1
  end
  for a = 1, 6 do
    for b = 1, 6 do
      for c = 1, 6 do ways[a + b + c] = ways[a + b + c] + 1 end
    end
  end
  local chi = 0.0
  for s = 3, 18 do
    local e = rolls * ways[s] / 216.0
    local d = hist[s] - e
    chi = chi + d * d / e
  end
  return hist, chi
end

local n = tonumber(arg and arg[1]) or 10000000
print(string.format("pi %.6f", estimate_pi(n)))
print(string.format("integral %.8f", integral(n)))
local returns, far, pos = walk(n)
print(string.format("walk returns %d farthest %d final %d", returns, far, pos))
local hist, chi = dice(floor(n / 3))
print(string.format("dice 10: %d 11: %d chi2 %.4f", hist[10], hist[11], chi))
print(string.format("state %d %d", lcg_state, mwc_state))

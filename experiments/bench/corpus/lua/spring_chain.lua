-- spring_chain: a Fermi-Pasta-Ulam chain of N masses on a line joined by springs of rest length
-- 1 with a cubic term (force k*s + beta*s^3 for a stretch s), both ends fixed, integrated with
-- position Verlet and light damping over three float arrays (previous, current, next positions)
-- rotated every step, with per-mass inverse masses from an LCG. Each mass reads its neighbours
-- i-1 and i+1. Starts from a triangular pluck plus LCG noise. Prints the kinetic and potential
-- energy, the middle mass's displacement and the largest stretch every quarter of the run.
-- Mass i (0-based in the formulas) is array slot i + 1.
local floor, max = math.floor, math.max
local seed = 60221

local function rand(n)
  seed = (seed * 69069 + 1) % 4294967296
  return floor(seed / 65536) % n
end

local function step(xp, x, xn, inv_m, n, dt2)
  local k, beta, keep = 1.0, 0.5, 0.9998
  for i = 2, n - 1 do
    local dl = x[i] - x[i - 1] - 1.0
    local dr = x[i + 1] - x[i] - 1.0
    local f = k * (dr - dl) + beta * (dr * dr * dr - dl * dl * dl)
    xn[i] = x[i] + (x[i] - xp[i]) * keep + f * inv_m[i] * dt2
  end
end

local function kinetic(xp, x, inv_m, n, dt)
  local e = 0.0
  for i = 2, n - 1 do
    local v = (x[i] - xp[i]) / dt
    e = e + 0.5 * v * v / inv_m[i]
  end
  return e
end

local function potential(x, n)
  local e, worst = 0.0, 0.0
  for i = 2, n do
    local s = x[i] - x[i - 1] - 1.0
    e = e + (0.5 * s * s + 0.125 * s * s * s * s)
    if s < 0.0 then s = -s end
    if s > worst then worst = s end
  end
  return e, worst
end

local n = tonumber(arg and arg[1]) or 2000
local steps = tonumber(arg and arg[2]) or 50000
local dt = 0.05
local dt2 = dt * dt
local xp, x, xn, inv_m = {}, {}, {}, {}
local mid = floor(n / 2)
for i = 0, n - 1 do
  local d = i
  if i > mid then d = n - 1 - i end
  local pos = i + 0.2 * d + (rand(2001) - 1000) / 20000.0
  if i == 0 or i == n - 1 then pos = i * 1.0 end
  x[i + 1] = pos
  xp[i + 1] = pos
  xn[i + 1] = pos
  inv_m[i + 1] = 1.0 / (1.0 + rand(4) * 0.5)
end
local quarter = max(1, floor(steps / 4))
for s = 1, steps do
  step(xp, x, xn, inv_m, n, dt2)
  xp, x, xn = x, xn, xp
  if s % quarter == 0 then
    local pe, worst = potential(x, n)
    print(string.format("step %d kinetic %.6f potential %.6f middle %.6f largest stretch %.6f",
      s, kinetic(xp, x, inv_m, n, dt), pe, x[mid + 1] - mid, worst))
  end
end

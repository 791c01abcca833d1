-- particles: N particles in the box [0, 100] x [0, 100], their positions and velocities in four
-- parallel float arrays. Each step pulls every particle toward the centre with a softened
-- inverse-square force, applies a little drag, moves it (semi-implicit Euler) and bounces it
-- off the walls (reflecting the position, reversing and damping the velocity). Particles start
-- at LCG positions with small LCG velocities. Prints the kinetic and potential energy and the
-- number of wall bounces every quarter of the run, then the mean distance from the centre.
local floor, max, sqrt = math.floor, math.max, math.sqrt
local seed = 1618

local function rand(n)
  seed = (seed * 69069 + 1) % 4294967296
  return floor(seed / 65536) % n
end

local function step(x, y, vx, vy, n)
  local g, dt, drag, damp = 400.0, 0.01, 0.9995, 0.9
  local bounces = 0
  for i = 1, n do
    local dx = 50.0 - x[i]
    local dy = 50.0 - y[i]
    local r2 = dx * dx + dy * dy + 1.0
    local f = g / (r2 * sqrt(r2))
    local nvx = (vx[i] + dx * f * dt) * drag
    local nvy = (vy[i] + dy * f * dt) * drag
    local nx = x[i] + nvx * dt
    local ny = y[i] + nvy * dt
    if nx < 0.0 then
      nx = -nx
      nvx = -nvx * damp
      bounces = bounces + 1
    elseif nx > 100.0 then
      nx = 200.0 - nx
      nvx = -nvx * damp
      bounces = bounces + 1
    end
    if ny < 0.0 then
      ny = -ny
      nvy = -nvy * damp
      bounces = bounces + 1
    elseif ny > 100.0 then
      ny = 200.0 - ny
      nvy = -nvy * damp
      bounces = bounces + 1
    end
    x[i] = nx
    y[i] = ny
    vx[i] = nvx
    vy[i] = nvy
  end
  return bounces
end

local function kinetic(vx, vy, n)
  local e = 0.0
  for i = 1, n do e = e + 0.5 * (vx[i] * vx[i] + vy[i] * vy[i]) end
  return e
end

local function potential(x, y, n)
  local e = 0.0
  for i = 1, n do
    local dx = 50.0 - x[i]
    local dy = 50.0 - y[i]
    e = e - 400.0 / sqrt(dx * dx + dy * dy + 1.0)
  end
  return e
end

local n = tonumber(arg and arg[1]) or 4000
local steps = tonumber(arg and arg[2]) or 12000
local x, y, vx, vy = {}, {}, {}, {}
for i = 1, n do
  x[i] = rand(100000) / 1000.0
  y[i] = rand(100000) / 1000.0
  vx[i] = (rand(2001) - 1000) / 100.0
  vy[i] = (rand(2001) - 1000) / 100.0
end
print(string.format("start kinetic %.6f potential %.6f", kinetic(vx, vy, n), potential(x, y, n)))
local bounces = 0
local quarter = max(1, floor(steps / 4))
for s = 1, steps do
  bounces = bounces + step(x, y, vx, vy, n)
  if s % quarter == 0 then
    print(string.format("step %d kinetic %.6f potential %.6f bounces %d", s, kinetic(vx, vy, n), potential(x, y, n), bounces))
  end
end
local dist = 0.0
for i = 1, n do
  local dx = x[i] - 50.0
  local dy = y[i] - 50.0
  dist = dist + sqrt(dx * dx + dy * dy)
end
print(string.format("mean distance %.6f", dist / n))

-- stencil_heat: the explicit 1-D heat equation on a rod of N cells, stored as two float arrays
-- swapped every step: v[i] = u[i] + k * (u[i-1] - 2.0 * u[i] + u[i+1]), with the two ends held
-- at fixed temperatures (100 on the left, 0 on the right). The rod starts cold with hot spots
-- drawn by an LCG. Prints the total heat and a position-weighted checksum every quarter of the
-- run, then the hottest cell of the right half and the number of cells above 10 degrees.
-- Cells are 0-based in the formulas and the output, arrays are indexed with +1.
local floor, max = math.floor, math.max
local seed = 31337

local function rand(n)
  seed = (seed * 69069 + 1) % 4294967296
  return floor(seed / 65536) % n
end

local function step(u, v, n, k)
  for i = 2, n - 1 do
    v[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1])
  end
end

local function total(u)
  local s = 0.0
  for i = 1, #u do s = s + u[i] end
  return s
end

local function weighted(u)
  local s = 0.0
  for i = 1, #u do s = s + u[i] * ((i - 1) % 7 + 1) end
  return s
end

local n = tonumber(arg and arg[1]) or 1000
local steps = tonumber(arg and arg[2]) or 150000
local k = 0.23
local u, v = {}, {}
for i = 1, n do u[i] = 0.0; v[i] = 0.0 end
for i = 2, n - 1 do
  if rand(10) == 0 then u[i] = rand(5000) / 50.0 end
end
u[1] = 100.0
v[1] = 100.0
print(string.format("start heat %.6f", total(u)))
local quarter = max(1, floor(steps / 4))
for s = 1, steps do
  step(u, v, n, k)
  u, v = v, u
  if s % quarter == 0 then
    print(string.format("step %d heat %.6f weighted %.6f", s, total(u), weighted(u)))
  end
end
local hot = floor(n / 2) + 1
local warm = 0
for i = floor(n / 2) + 2, n - 1 do
  if u[i] > u[hot] then hot = i end
end
for i = 1, n do
  if u[i] > 10.0 then warm = warm + 1 end
end
print(string.format("hottest right-half cell %d %.9f cells above 10 %d", hot - 1, u[hot], warm))

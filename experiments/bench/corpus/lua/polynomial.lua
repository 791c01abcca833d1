-- polynomial: polynomials as coefficient arrays (lowest degree first; coefficient i at index
-- i+1) that mix integer and float coefficients (under Lua 5.4). Builds a polynomial from integer
-- and fractional roots by repeated multiplication, evaluates with Horner's rule at integer and
-- float points, differentiates, integrates with Simpson's rule on N intervals, finds the roots
-- again with Newton's method plus deflation by synthetic division, evaluates Chebyshev
-- polynomials by their recurrence, and checks an all-integer polynomial at integer points.
local floor, abs = math.floor, math.abs

local function poly_mul(p, q)
  local out = {}
  for i = 1, #p + #q - 1 do out[i] = 0 end
  for i = 1, #p do
    for j = 1, #q do out[i + j - 1] = out[i + j - 1] + p[i] * q[j] end
  end
  return out
end

local function horner(p, x)
  local acc = 0
  for i = #p, 1, -1 do acc = acc * x + p[i] end
  return acc
end

local function derivative(p)
  local out = {}
  for i = 2, #p do out[i - 1] = p[i] * (i - 1) end
  return out
end

local function deflate(p, r)
  local n = #p - 1
  local out = {}
  local carry = p[n + 1]
  for i = n - 1, 0, -1 do
    out[i + 1] = carry
    carry = p[i + 1] + carry * r
  end
  return out
end

local function newton(p, x0)
  local d = derivative(p)
  local x = x0
  for it = 0, 99 do
    local step = horner(p, x) / horner(d, x)
    x = x - step
    if abs(step) < 1e-13 then return x, it + 1 end
  end
  return x, 100
end

local function simpson(p, lo, hi, n)
  local h = (hi - lo) / n
  local s = horner(p, lo) + horner(p, hi)
  for i = 1, n - 1 do
    local w = 2
    if i % 2 == 1 then w = 4 end
    s = s + w * horner(p, lo + i * h)
  end
  return s * h / 3
end

local function chebyshev_sum(n, x)
  local t0, t1 = 1, x
  local s = t0 + t1
  for k = 2, n - 1 do
    local t2 = 2 * x * t1 - t0
    s = s + t2
    t0 = t1
    t1 = t2
  end
  return s
end

local n = tonumber(arg and arg[1]) or 2000000
local roots = {1, -2, 0.5, 3, -1.5, 2.25, -3}
local p = {1}
for k = 1, #roots do p = poly_mul(p, {-roots[k], 1}) end
local coeffs = ""
for i = 1, #p do coeffs = coeffs .. string.format(" %.4f", p[i]) end
print("coefficients" .. coeffs)
local isum = 0
for x = -5, 5 do isum = isum + horner(p, x) end
print(string.format("sum over integer points %.4f p(0.1) %.9f", isum, horner(p, 0.1)))
print(string.format("integral [-3, 3.25] %.6f", simpson(p, -3, 3.25, n - n % 2)))
local q = p
local rs = ""
local iters = 0
for k = 0, #roots - 1 do
  local x, it = newton(q, 4.5 - 1.3 * k)
  iters = iters + it
  local r = newton(p, x)
  rs = rs .. string.format(" %.9f", r)
  q = deflate(q, r)
end
print(string.format("roots%s iterations %d", rs, iters))
local csum = 0.0
local m = floor(n / 50)
for i = 0, m - 1 do csum = csum + chebyshev_sum(40, -1 + 2.0 * i / m) end
print(string.format("chebyshev %.6f int T %d", csum, chebyshev_sum(12, 3)))
local ip = {1}
local iroots = {1, -2, 3, -1, 2}
for k = 1, #iroots do ip = poly_mul(ip, {-iroots[k], 1}) end
local di = derivative(ip)
local icheck, sign_changes = 0, 0
local prev = horner(ip, -400)
for x = -400, 399 do
  local v = horner(ip, x)
  icheck = (icheck * 7 + v + horner(di, x)) % 1000000007
  if (v < 0) ~= (prev < 0) then sign_changes = sign_changes + 1 end
  prev = v
end
local parts = {}
for i = 1, #ip do parts[i] = string.format("%d", ip[i]) end
print(string.format("int polynomial [%s] checksum %d sign changes %d", table.concat(parts, ", "), icheck, sign_changes))

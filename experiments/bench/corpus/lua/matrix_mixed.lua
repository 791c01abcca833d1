-- matrix_mixed: dense matrices as arrays of row arrays whose entries mix integers and floats
-- (under Lua 5.4; LuaJIT has only doubles). Multiplies a mixed matrix by itself, raises an
-- integer matrix to a power modulo 1000, and solves A x = b by Gaussian elimination with
-- partial pivoting. Prints the trace, the modular power's checksum, the log-determinant and the
-- solution's sums. Indices are 0-based in the formulas, arrays are indexed with +1.
local log, abs, max = math.log, math.abs, math.max

local function make_mixed(n)
  local m = {}
  for i = 0, n - 1 do
    local row = {}
    for j = 0, n - 1 do
      if i == j then row[j + 1] = 2 * n
      elseif (i + j) % 2 == 0 then row[j + 1] = (i * 7 + j * 13) % 17 - 8
      else row[j + 1] = ((i * 3 + j * 5) % 11) * 0.5 - 2.0 end
    end
    m[i + 1] = row
  end
  return m
end

local function matmul(a, b, modulus)
  local n = #a
  local c = {}
  for i = 1, n do
    local row = {}
    for j = 1, n do row[j] = 0 end
    local ai = a[i]
    for k = 1, n do
      local aik = ai[k]
      if aik ~= 0 then
        local bk = b[k]
        for j = 1, n do row[j] = row[j] + aik * bk[j] end
      end
    end
    if modulus > 0 then
      for j = 1, n do row[j] = row[j] % modulus end
    end
    c[i] = row
  end
  return c
end

local function solve(a, b)
  local n = #a
  local m = {}
  for i = 1, n do
    local row = {}
    for j = 1, n do row[j] = a[i][j] end
    row[n + 1] = b[i]
    m[i] = row
  end
  local logdet, sign = 0.0, 1
  for col = 1, n do
    local piv = col
    for r = col + 1, n do
      if abs(m[r][col]) > abs(m[piv][col]) then piv = r end
    end
    if piv ~= col then m[piv], m[col] = m[col], m[piv]; sign = -sign end
    local p = m[col][col]
    if p < 0 then sign = -sign end
    logdet = logdet + log(abs(p))
    for r = col + 1, n do
      local f = m[r][col] / p
      if f ~= 0.0 then
        local mr, mc = m[r], m[col]
        for j = col, n + 1 do mr[j] = mr[j] - f * mc[j] end
      end
    end
  end
  local x = {}
  for i = 1, n do x[i] = 0.0 end
  for i = n, 1, -1 do
    local s = m[i][n + 1]
    for j = i + 1, n do s = s - m[i][j] * x[j] end
    x[i] = s / m[i][i]
  end
  return x, logdet, sign
end

local n = tonumber(arg and arg[1]) or 280
local m = make_mixed(n)
local sq = matmul(m, m, 0)
local tr = 0
for i = 1, n do tr = tr + sq[i][i] end
print(string.format("trace %.4f", tr))

local im = {}
for i = 0, n - 1 do
  local row = {}
  for j = 0, n - 1 do row[j + 1] = (i * j + i + 2 * j + 1) % 10 end
  im[i + 1] = row
end
local p = im
for k = 1, 3 do p = matmul(p, im, 1000) end
local check = 0
for i = 1, n do
  for j = 1, n do check = (check * 31 + p[i][j]) % 1000000007 end
end
print(string.format("power checksum %d", check))

local b = {}
for i = 0, n - 1 do b[i + 1] = i % 5 - 2 end
local x, logdet, sign = solve(m, b)
local sx, sax = 0.0, 0.0
for i = 1, n do sx = sx + x[i]; sax = sax + abs(x[i]) end
local worst = 0.0
for i = 1, n do
  local r = -b[i]
  for j = 1, n do r = r + m[i][j] * x[j] end
  worst = max(worst, abs(r))
end
print(string.format("logdet %.6f sign %d", logdet, sign))
print(string.format("sum x %.9f sum |x| %.9f residual small %s", sx, sax, tostring(worst < 1e-9)))

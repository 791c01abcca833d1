-- csv_fsm: a character-level state machine. Generates N CSV records (quoted names with commas
-- and doubled quotes, integer quantities, decimal prices, optional notes), then parses each
-- line with an explicit state variable (field start / unquoted / quoted / quote-in-quoted) and
-- converts numeric fields with a second small state machine. Prints column totals and counts.
local floor = math.floor

local NAMES = {"bolt", "nut, hex", "washer \"M6\"", "gear", "spring", "cam, lobe", "pin"}
local seed = 2024

local function rand(n)
  seed = (seed * 69069 + 1) % 4294967296
  return floor(seed / 65536) % n
end

local function istr(x) return string.format("%d", x) end

local function quote(s)
  local out = "\""
  for i = 1, #s do
    local c = s:sub(i, i)
    if c == "\"" then out = out .. "\"\"" else out = out .. c end
  end
  return out .. "\""
end

local function gen_record(i)
  local name = NAMES[rand(#NAMES) + 1]
  local line = quote(name .. " " .. istr(i % 97)) .. "," .. istr(rand(200) - 20) .. ","
  line = line .. istr(rand(1000)) .. "." .. istr(rand(10)) .. istr(rand(10)) .. ","
  if rand(3) == 0 then line = line .. quote("note " .. istr(rand(50)) .. ", ok") end
  return line
end

-- numeric field: states 0 = sign, 1 = integer part, 2 = fraction
local function parse_number(s)
  local state = 0
  local neg = false
  local ip, frac, fdigits = 0, 0, 0
  for i = 1, #s do
    local c = s:sub(i, i)
    local skip = false
    if state == 0 then
      state = 1
      if c == "-" then neg = true; skip = true end
    end
    if not skip then
      if state == 1 then
        if c == "." then state = 2 else ip = ip * 10 + tonumber(c) end
      else
        frac = frac * 10 + tonumber(c); fdigits = fdigits + 1
      end
    end
  end
  local v = ip
  if state == 2 then v = ip + frac / 10 ^ fdigits end
  if neg then return -v end
  return v
end

-- CSV line: 0 = field start, 1 = unquoted, 2 = quoted, 3 = quote seen inside quoted
local function parse_line(line, stats)
  local fields = {}
  local cur = ""
  local state = 0
  for i = 1, #line do
    local c = line:sub(i, i)
    if state == 0 then
      if c == "\"" then state = 2; stats[1] = stats[1] + 1
      elseif c == "," then fields[#fields + 1] = cur
      else cur = c; state = 1 end
    elseif state == 1 then
      if c == "," then fields[#fields + 1] = cur; cur = ""; state = 0 else cur = cur .. c end
    elseif state == 2 then
      if c == "\"" then state = 3 else cur = cur .. c end
    else
      if c == "\"" then cur = cur .. "\""; state = 2; stats[2] = stats[2] + 1
      else fields[#fields + 1] = cur; cur = ""; state = 0 end
    end
  end
  fields[#fields + 1] = cur
  return fields
end

local function show_list(l)
  local parts = {}
  for i = 1, #l do
    parts[i] = "\"" .. l[i]:gsub("\\", "\\\\"):gsub("\"", "\\\"") .. "\""
  end
  return "[" .. table.concat(parts, ", ") .. "]"
end

local n = tonumber(arg and arg[1]) or 50000
local stats = {0, 0}
local qty, value, notes, nbytes = 0, 0.0, 0, 0
local longest = ""
for i = 0, n - 1 do
  local line = gen_record(i)
  nbytes = nbytes + #line
  local f = parse_line(line, stats)
  assert(#f == 4, "bad record " .. line)
  local q = parse_number(f[2])
  local p = parse_number(f[3])
  qty = qty + q
  value = value + q * p
  if #f[4] > 0 then notes = notes + 1 end
  if #f[1] > #longest or (#f[1] == #longest and f[1] < longest) then longest = f[1] end
  if i == 0 then print(line); print(show_list(f)) end
end
print(string.format("records %d bytes %d quoted %d escaped quotes %d", n, nbytes, stats[1], stats[2]))
print(string.format("qty %d value %.2f notes %d", qty, value, notes))
print("longest " .. longest)
